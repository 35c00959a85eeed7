"""The embedder port: text in, unit vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors, one row per text.

    Local: all-MiniLM-L6-v2, int8, in ONNX Runtime. AWS: Bedrock (Titan Text Embeddings v2).
    Raises `BackendUnavailable("embedder", ...)` when the model cannot be reached.
    """

    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def vector_bytes(vector: np.ndarray) -> bytes:
    """A vector as stored beside a record: little-endian float32."""
    return np.asarray(vector, dtype="<f4").tobytes()


def vector_from_bytes(data: bytes, dimension: int) -> np.ndarray | None:
    """The vector `vector_bytes` stored, or None when it is not one of `dimension` floats (another model's)."""
    if len(data) != 4 * dimension:
        return None
    return np.frombuffer(data, dtype="<f4").astype(np.float32)
