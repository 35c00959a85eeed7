"""uv.lock, read: the locked version of each package, and hashed requirements for a part of the lock.

`uv lock` (`make lock`) writes uv.lock for every platform and Python the project supports. The
installs read it through exported requirements files (`scripts/lock.py` writes them); the Lambda
layer needs a part of it that no `uv export` option selects (the layer's requirements and what
they require, on Linux arm64 with the runtime's Python), so that part is computed here.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
LOCK_FILE = REPO_ROOT / "uv.lock"


def normalized(name: str) -> str:
    """A distribution name as PEP 503 compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Dependency:
    """One edge of the lock's graph: a package, the extras asked of it, and when it applies."""

    name: str
    extras: tuple[str, ...] = ()
    marker: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class LockedPackage:
    name: str
    version: str
    dependencies: tuple[Dependency, ...]
    optional_dependencies: Mapping[str, tuple[Dependency, ...]]
    # (wheel file name, "sha256:...") for every wheel of this version the lock records.
    wheels: tuple[tuple[str, str], ...]
    source: Mapping[str, Any] = field(default_factory=dict)


class LockError(ValueError):
    """uv.lock is missing, unreadable, or lacks what was asked of it."""


def _dependencies(entries: Iterable[Mapping[str, Any]]) -> tuple[Dependency, ...]:
    return tuple(
        Dependency(normalized(e["name"]), tuple(e.get("extra", ())), e.get("marker"), e.get("version"))
        for e in entries
    )


@dataclass(frozen=True)
class Lock:
    packages: tuple[LockedPackage, ...]
    document: Mapping[str, Any]

    @property
    def root(self) -> Mapping[str, Any]:
        """The project's own entry (found by its editable source, so a renamed project is still found)."""
        for entry in self.document.get("package", []):
            if entry.get("source", {}).get("editable") == ".":
                return entry
        raise LockError("uv.lock has no entry for the project itself (source = { editable = \".\" })")

    def package(self, name: str, version: str | None = None) -> LockedPackage:
        candidates = [p for p in self.packages if p.name == normalized(name)]
        if version is not None:
            candidates = [p for p in candidates if p.version == version]
        if len(candidates) != 1:
            found = ", ".join(p.version for p in candidates) or "none"
            raise LockError(f"uv.lock has {len(candidates)} versions of {name} ({found}); expected one")
        return candidates[0]

    def closure(self, requirements: Iterable[str], environment: Mapping[str, str]) -> list[LockedPackage]:
        """The locked packages `requirements` pull in, transitively, where `environment`'s markers hold.

        `requirements` are names with optional extras (`aws-lambda-powertools[tracer]`); sorted by name.
        """
        from packaging.markers import Marker
        from packaging.requirements import Requirement

        found: dict[str, LockedPackage] = {}
        done: set[tuple[str, str]] = set()
        pending = [Dependency(normalized(r.name), tuple(sorted(r.extras))) for r in map(Requirement, requirements)]
        while pending:
            dependency = pending.pop()
            if dependency.marker is not None and not Marker(dependency.marker).evaluate(dict(environment)):
                continue
            package = self.package(dependency.name, dependency.version)
            found[package.name] = package
            for extra in ("", *dependency.extras):
                if (package.name, extra) in done:
                    continue
                done.add((package.name, extra))
                if extra == "":
                    pending.extend(package.dependencies)
                elif extra in package.optional_dependencies:
                    pending.extend(package.optional_dependencies[extra])
                else:
                    raise LockError(f"uv.lock has no extra {extra!r} for {package.name}")
        return sorted(found.values(), key=lambda p: p.name)


def read_lock(path: Path = LOCK_FILE) -> Lock:
    try:
        document = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise LockError(f"{path.name} is missing: run `make lock`") from None
    except tomllib.TOMLDecodeError as error:
        raise LockError(f"{path.name} is not valid TOML ({error}): run `make lock`") from None
    packages = tuple(
        LockedPackage(
            name=normalized(entry["name"]),
            version=entry.get("version", ""),
            dependencies=_dependencies(entry.get("dependencies", ())),
            optional_dependencies={
                extra: _dependencies(entries) for extra, entries in entry.get("optional-dependencies", {}).items()
            },
            wheels=tuple((w["url"].rsplit("/", 1)[-1], w["hash"]) for w in entry.get("wheels", ())),
            source=entry.get("source", {}),
        )
        for entry in document.get("package", [])
    )
    return Lock(packages, document)


def wheel_requirements(packages: Iterable[LockedPackage], supported: frozenset[Any] | None = None) -> str:
    """`name==version` lines with the hash of each locked wheel whose tags are in `supported` (None: all).

    Raises LockError naming every package that has no such wheel (pip would fail on it later).
    With `supported` None this needs only the standard library, so a bare venv can run it.
    """
    lines, missing = [], []
    for package in packages:
        if supported is None:
            hashes = sorted(digest for _, digest in package.wheels)
        else:
            from packaging.utils import parse_wheel_filename

            hashes = sorted(d for filename, d in package.wheels if parse_wheel_filename(filename)[3] & supported)
        if not hashes:
            missing.append(f"{package.name}=={package.version}")
            continue
        lines.append(" \\\n".join([f"{package.name}=={package.version}", *(f"    --hash={h}" for h in hashes)]))
    if missing:
        raise LockError(f"no locked wheel for the target platform: {', '.join(missing)}")
    return "".join(f"{line}\n" for line in lines)
