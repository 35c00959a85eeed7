"""spaCy imported without its command line, which loading and running a pipeline never uses.

spaCy's package imports one CLI function as it loads (`spacy/__init__.py`: `from .cli.info import
info`), and `spacy.cli` imports every command with it: typer, weasel, httpx, jinja2, rich, pygments
(36 MiB imported on their own, 0.2 s; `agentmem serve` after a turn and a retrieve: 372 -> 361 MiB).
`import_spacy` imports spaCy with `spacy.cli.info` standing in for that one import: its `info`
imports the real command line when it is called, and once spaCy has loaded the stand-in is gone, so
`import spacy.cli` (or `python -m spacy`) later loads the real package. Nothing else of spaCy refers
to its CLI (spaCy 3.8).
"""

from __future__ import annotations

import sys
import types
from typing import Any

_INFO_MODULE = "spacy.cli.info"


def import_spacy() -> None:
    """Import spaCy, its command line left to load on first use; nothing if spaCy is imported already."""
    if "spacy" in sys.modules:
        return
    stand_in = types.ModuleType(_INFO_MODULE)
    stand_in.info = _info  # type: ignore[attr-defined]
    sys.modules[_INFO_MODULE] = stand_in
    try:
        import spacy  # noqa: F401
    finally:
        if sys.modules.get(_INFO_MODULE) is stand_in:
            del sys.modules[_INFO_MODULE]


def _info(*args: Any, **kwargs: Any) -> Any:
    """`spacy.info`: the real one, its command line imported now."""
    from spacy.cli.info import info

    return info(*args, **kwargs)
