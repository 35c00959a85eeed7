"""A first pass over int8 copies of the vectors that rules out rows, so only a few are scored exactly.

A search of 10,000 x 384 float32 rows reads 15 MB, and at that size the dot products wait on memory.
Each row is also kept as int8 codes with its own scale (a quarter of the bytes), and numkong's SIMD
kernels take the query's int8 dot product with every row. For each row the error of that estimate is
bounded (Cauchy-Schwarz, from the rounding error of the row and of the query), so a row whose best case
is below the k-th best worst case cannot be among the k nearest: it is dropped without being read in
float32. The rows that remain are scored exactly, so the answer is the one a full exact scan gives.

Bound: with v' and q' the rows and query rebuilt from their codes, v.q - v'.q' = v'.(q - q') + (v - v').q,
so |v.q - v'.q'| <= |v'| |q - q'| + |v - v'| |q|, and both norms of each row are kept when it is coded.
"""

from __future__ import annotations

from typing import NamedTuple

import numkong
import numpy as np

_LEVELS = 127.0
# The float32 sum over 384 products in the exact score rounds by far less than this; it widens every
# bound, so that rounding can never drop a row the exact scan would keep.
_SLACK = 1e-4


class Codes(NamedTuple):
    """Rows as int8 codes: `codes[i] * step[i]` rebuilds row i; `norm` is that rebuilt row's length and
    `error` the length of its difference from the row."""

    codes: np.ndarray  # int8, (n, dimension)
    step: np.ndarray  # float64, (n,)
    norm: np.ndarray  # float64, (n,)
    error: np.ndarray  # float64, (n,)


def encode(rows: np.ndarray) -> Codes:
    """The codes of float32 `rows` (n, dimension), each row scaled so its largest component is 127."""
    rows = np.atleast_2d(rows).astype(np.float64)
    peak = np.abs(rows).max(axis=1)
    step = np.where(peak > 0, peak / _LEVELS, 1.0)
    codes = np.rint(rows / step[:, None]).astype(np.int8)
    rebuilt = codes * step[:, None]
    return Codes(codes, step, np.linalg.norm(rebuilt, axis=1), np.linalg.norm(rows - rebuilt, axis=1))


def candidates(stored: Codes, query: np.ndarray, k: int, live: np.ndarray | None = None) -> np.ndarray:
    """The rows (ascending) that may be among the `k` best exact dot products with `query`, among `live`
    rows (a boolean mask; all rows when None). Every row left out scores less than k others do."""
    n = len(stored.step)
    coded = encode(query)
    estimate = np.asarray(numkong.cdist(coded.codes, stored.codes, metric="dot"))[0] * (stored.step * coded.step[0])
    bound = stored.norm * coded.error[0] + stored.error * float(np.linalg.norm(query)) + _SLACK
    lower, upper = estimate - bound, estimate + bound
    if live is not None:
        lower = np.where(live, lower, -np.inf)
        k = min(k, int(live.sum()))
        if k == 0:
            return np.empty(0, dtype=np.intp)
    # At least k rows score no less than `floor`; a row whose best case is below it is not among the k.
    floor = np.partition(lower, n - k)[n - k]
    keep = upper >= floor
    if live is not None:
        keep &= live
    return np.flatnonzero(keep)
