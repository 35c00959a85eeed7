"""The bytes of the DynamoDB keyword index: one owner's base segment, its deltas, and the view over both.

A **base segment** is an owner's inverted index at one merge, zlib-compressed:

    4 bytes: length of the header, big-endian | header (JSON) | postings (uint32, little-endian)

The header holds `ids` (every document's item id, in first-insertion order: a document's position is
its tie-breaker, as in the local index), `lengths` (its length in terms) and `terms`
(`{term: [offset, n]}`: where in the postings its `n` document positions start, followed by the `n`
term frequencies). A search decodes the header once (it is cached with the segment) and the postings
of the query's terms only: a 10k-turn owner's search touches a few thousand integers, not the index.

A **delta** is what one write changed: `{"put": [[item_id, {term: tf}], ...], "del": [item_id, ...]}`
(JSON, zlib), puts before deletes, as the port's upsert and delete are separate calls.

`SegmentView` is the owner's documents as a search sees them: the base, less what the deltas deleted
or replaced, plus what they put, in the order they were written; `to_base` folds it into the next
base segment (a merge). Positions are kept across a replacement and renumbered densely at a merge
(relative order, all a tie-break needs, is unchanged).
"""

from __future__ import annotations

import json
import struct
import zlib
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

_HEADER_LENGTH = struct.Struct(">I")
_LITTLE_ENDIAN = array("I", [1]).tobytes()[0] == 1


def _uint32s(data: bytes | memoryview) -> array[int]:
    values = array("I")
    values.frombytes(bytes(data))
    if not _LITTLE_ENDIAN:  # pragma: no cover - every Lambda and dev machine is little-endian
        values.byteswap()
    return values


@dataclass
class BaseSegment:
    """A decoded base segment (see the module docstring); postings are decoded per term, on demand."""

    ids: list[str]
    lengths: list[int]
    terms: dict[str, list[int]]
    postings_bytes: bytes
    total_length: int = 0
    position: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.total_length = sum(self.lengths)
        self.position = {item_id: index for index, item_id in enumerate(self.ids)}

    def memory_estimate(self) -> int:
        """Roughly the bytes this decoded segment holds in memory (postings, ids, dictionaries)."""
        return len(self.postings_bytes) + 150 * len(self.ids) + 150 * len(self.terms)

    def postings(self, term: str) -> tuple[array[int], array[int]] | None:
        """(document positions, term frequencies) of `term`, or None when no document has it."""
        entry = self.terms.get(term)
        if entry is None:
            return None
        offset, n = entry
        view = memoryview(self.postings_bytes)
        return _uint32s(view[offset : offset + 4 * n]), _uint32s(view[offset + 4 * n : offset + 8 * n])


EMPTY_BASE = BaseSegment([], [], {}, b"")


def encode_base(documents: Sequence[tuple[str, Mapping[str, int]]]) -> bytes:
    """The compressed base segment of `(item_id, term counts)` documents, given in position order."""
    inverted: dict[str, tuple[list[int], list[int]]] = {}
    lengths = []
    for position, (_, terms) in enumerate(documents):
        lengths.append(sum(terms.values()))
        for term, tf in terms.items():
            positions, frequencies = inverted.setdefault(term, ([], []))
            positions.append(position)
            frequencies.append(tf)
    blob = array("I")
    term_index: dict[str, list[int]] = {}
    for term in sorted(inverted):
        positions, frequencies = inverted[term]
        term_index[term] = [4 * len(blob), len(positions)]
        blob.extend(positions)
        blob.extend(frequencies)
    if not _LITTLE_ENDIAN:  # pragma: no cover
        blob.byteswap()
    header = json.dumps(
        {"ids": [item_id for item_id, _ in documents], "lengths": lengths, "terms": term_index},
        separators=(",", ":"), ensure_ascii=False,
    ).encode()
    return zlib.compress(_HEADER_LENGTH.pack(len(header)) + header + blob.tobytes(), 6)


def decode_base(data: bytes) -> BaseSegment:
    raw = zlib.decompress(data)
    (header_length,) = _HEADER_LENGTH.unpack_from(raw)
    start = _HEADER_LENGTH.size
    header = json.loads(raw[start : start + header_length])
    return BaseSegment(header["ids"], header["lengths"], header["terms"], raw[start + header_length :])


def encode_delta(puts: Sequence[tuple[str, Mapping[str, int]]], deletes: Sequence[str]) -> bytes:
    body: dict[str, Any] = {}
    if puts:
        body["put"] = [[item_id, dict(terms)] for item_id, terms in puts]
    if deletes:
        body["del"] = list(deletes)
    return zlib.compress(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode(), 6)


def decode_delta(data: bytes) -> tuple[list[tuple[str, dict[str, int]]], list[str]]:
    body = json.loads(zlib.decompress(data))
    return [(item_id, terms) for item_id, terms in body.get("put", [])], list(body.get("del", []))


class SegmentView:
    """An owner's live documents: a base segment with deltas laid over it (see the module docstring)."""

    def __init__(self, base: BaseSegment):
        self.base = base
        # Base documents a delta deleted or replaced: they no longer count, in statistics or hits.
        self.hidden: set[int] = set()
        # Documents the deltas put, by item id: term counts, length, position.
        self.added: dict[str, Counter[str]] = {}
        self.added_lengths: dict[str, int] = {}
        self.added_order: dict[str, int] = {}
        # Base documents deleted by a delta: put again, they take a new position.
        self.released: set[str] = set()
        self._next_position = len(base.ids)
        self.count = len(base.ids)
        self.total_length = base.total_length

    def apply(self, puts: Sequence[tuple[str, Mapping[str, int]]], deletes: Sequence[str]) -> None:
        """Lay one delta over the view: its puts (replacing, keeping the position), then its deletes."""
        for item_id, terms in puts:
            self._remove(item_id, keep_position=True)
            counts = Counter(terms)
            length = sum(counts.values())
            self.added[item_id] = counts
            self.added_lengths[item_id] = length
            if item_id not in self.added_order:
                base_position = self.base.position.get(item_id)
                if base_position is not None and item_id not in self.released:
                    self.added_order[item_id] = base_position
                else:
                    self.added_order[item_id] = self._next_position
                    self._next_position += 1
            self.count += 1
            self.total_length += length
        for item_id in deletes:
            self._remove(item_id, keep_position=False)

    def _remove(self, item_id: str, *, keep_position: bool) -> None:
        if item_id in self.added:
            self.total_length -= self.added_lengths.pop(item_id)
            del self.added[item_id]
            self.count -= 1
        else:
            position = self.base.position.get(item_id)
            if position is not None and position not in self.hidden:
                self.hidden.add(position)
                self.count -= 1
                self.total_length -= self.base.lengths[position]
        if not keep_position:
            # Deleted, the document loses its place: put again, it comes last, as in the local index.
            self.added_order.pop(item_id, None)
            if item_id in self.base.position:
                self.released.add(item_id)
    def holds(self, item_id: str) -> bool:
        """Whether `item_id` is one of the live documents."""
        if item_id in self.added:
            return True
        position = self.base.position.get(item_id)
        return position is not None and position not in self.hidden

    def postings(self, term: str) -> dict[str, int]:
        """`{item_id: tf}` of the live documents holding `term`."""
        out: dict[str, int] = {}
        decoded = self.base.postings(term)
        if decoded is not None:
            ids = self.base.ids
            hidden = self.hidden
            for position, tf in zip(*decoded, strict=True):
                if position not in hidden:
                    out[ids[position]] = tf
        for item_id, terms in self.added.items():
            count = terms.get(term)
            if count:
                out[item_id] = count
        return out

    def lengths_of(self, item_ids: Sequence[str]) -> dict[str, int]:
        out = {}
        for item_id in item_ids:
            length = self.added_lengths.get(item_id)
            out[item_id] = length if length is not None else self.base.lengths[self.base.position[item_id]]
        return out

    def order_of(self, item_ids: Sequence[str]) -> dict[str, int]:
        return {
            item_id: self.added_order[item_id] if item_id in self.added_order else self.base.position[item_id]
            for item_id in item_ids
        }

    def documents(self) -> list[tuple[str, Mapping[str, int]]]:
        """Every live document with its term counts, in position order: what the next base holds."""
        forward: dict[int, Counter[str]] = {}
        base = self.base
        for term, (offset, n) in base.terms.items():
            view = memoryview(base.postings_bytes)
            positions = _uint32s(view[offset : offset + 4 * n])
            frequencies = _uint32s(view[offset + 4 * n : offset + 8 * n])
            for position, tf in zip(positions, frequencies, strict=True):
                if position not in self.hidden:
                    forward.setdefault(position, Counter())[term] = tf
        ordered: list[tuple[int, str, Mapping[str, int]]] = [
            (position, base.ids[position], forward.get(position, Counter()))
            for position in range(len(base.ids)) if position not in self.hidden
        ]
        ordered += [(self.added_order[item_id], item_id, terms) for item_id, terms in self.added.items()]
        ordered.sort(key=lambda entry: entry[0])
        return [(item_id, terms) for _, item_id, terms in ordered]
