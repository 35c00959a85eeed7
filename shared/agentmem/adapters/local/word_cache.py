"""Word lists derived from installed packages, kept in the cache folder so a server does not derive them again.

The name gazetteer and the street words are read out of Faker's ~80 locale modules. Importing those
modules keeps them, and everything they hold, in the process: about 30 MiB of a server's memory for a
few MB of words. Derived once (at install, or by the first process) and written here as JSON, the next
process reads the words alone and never imports Faker.

A file's name carries a hash of the deriving modules' source, the data files they read and the versions
of the packages read, so a change to any derives the words again; a folder that cannot be written only
costs that.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path

from agentmem.adapters.local.minilm_onnx import default_cache_dir

log = logging.getLogger(__name__)

WordLists = dict[str, list[str]]


def cache_path(name: str, sources: Iterable[Path], packages: Iterable[str]) -> Path:
    """The file `name`'s word lists are kept in, for these files (the deriving modules, the data they read)
    and these packages' versions."""
    digest = hashlib.sha256(name.encode())
    for source in sources:
        digest.update(b"\0" + source.read_bytes())
    for package in packages:
        digest.update(f"\0{package}={metadata.version(package)}".encode())
    return default_cache_dir() / f"{name}-{digest.hexdigest()[:16]}.json"


def cached_word_lists(
    name: str, sources: Iterable[Path], packages: Iterable[str], derive: Callable[[], WordLists]
) -> WordLists:
    """`derive()`'s word lists, read from the cache folder if these sources and versions derived them before."""
    path = cache_path(name, sources, packages)
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        loaded = None
    if isinstance(loaded, dict) and all(
        isinstance(words, list) and all(isinstance(word, str) for word in words) for words in loaded.values()
    ):
        return loaded
    lists = derive()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        partial.write_text(json.dumps(lists, ensure_ascii=False), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        log.warning("word lists %s could not be cached in %s", name, path.parent)
    return lists
