#!/usr/bin/env python3
"""The lock file and the hashed requirements files every install reads (`make lock`).

    .venv/bin/python scripts/lock.py             # uv lock (keep the locked versions that still fit), export
    .venv/bin/python scripts/lock.py --upgrade   # uv lock --upgrade: the newest versions the ranges allow
    .venv/bin/python scripts/lock.py --check     # do uv.lock, pyproject.toml and the exports agree? (offline)
    python3 scripts/lock.py tools                # print uv's and packaging's locked lines (standard library only)

uv.lock is the one record of what is installed; the requirements files are exports of it, one
per use, installed with `pip install --require-hashes --no-deps --only-binary=:all:`:

- requirements-serve.txt  the runtime and the `mcp` extra: what `make serve` needs
- requirements-dev.txt    the runtime, every extra and the dev tools: what `make test` and CI need
- requirements-build.txt  the build backend, for `pip install --no-build-isolation -e .`
- requirements-layer.txt  the Lambda layer (`make bundle`): its requirements and what they require,
                          with only the arm64 Linux wheels of the runtime's Python
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from infra.lockfile import LOCK_FILE, REPO_ROOT, LockError, normalized, read_lock, wheel_requirements

HEADER = "# Exported from uv.lock by `make lock` (scripts/lock.py); do not edit. Installed with\n# {install}\n"
INSTALL = "pip install --require-hashes --no-deps --only-binary=:all: -r {name}"
# Each export: the file and the `uv export` options that select its part of the lock.
EXPORTS: dict[str, tuple[str, ...]] = {
    "requirements-serve.txt": ("--no-default-groups", "--extra", "mcp"),
    "requirements-dev.txt": ("--no-default-groups", "--extra", "dev"),
    "requirements-build.txt": ("--only-group", "build-backend"),
}
LAYER_FILE = "requirements-layer.txt"
# What `make lock` itself needs before anything else is installed.
TOOLS = ("uv", "packaging")


def uv(*arguments: str, capture: bool = True) -> str:
    """uv's output; its progress goes to this terminal when `capture` is False."""
    try:
        from uv import find_uv_bin
    except ModuleNotFoundError:
        raise LockError("uv is not installed here: `make lock` installs it from uv.lock first") from None
    result = subprocess.run([find_uv_bin(), *arguments], cwd=REPO_ROOT, capture_output=capture, text=True, check=False)
    if result.returncode != 0:
        raise LockError(f"uv {' '.join(arguments)} failed" + (f":\n{result.stderr.strip()}" if capture else ""))
    return result.stdout or ""


def exported(name: str) -> str:
    """What `name` must hold for the current uv.lock (uv export --frozen reads the lock only: offline)."""
    text = uv("export", "--frozen", "--format", "requirements-txt", "--no-emit-project", "--no-header",
              "--quiet", *EXPORTS[name])  # fmt: skip
    return HEADER.format(install=INSTALL.format(name=name)) + text


def layer_export() -> str:
    from infra.bundling import layer_requirements_text

    install = INSTALL.format(name=LAYER_FILE).replace(" -r", " --target ... --platform ... -r")
    install = f"scripts/bundle_lambda.py: {install}"
    return HEADER.format(install=install) + layer_requirements_text()


def expected_files() -> dict[str, str]:
    return {**{name: exported(name) for name in EXPORTS}, LAYER_FILE: layer_export()}


def write_exports() -> None:
    for name, text in expected_files().items():
        path = REPO_ROOT / name
        # An unchanged file keeps its time, so make does not reinstall from it.
        if path.is_file() and path.read_text() == text:
            print(f"{name} unchanged")
            continue
        path.write_text(text)
        print(f"wrote {name}")


def pyproject_requirements(pyproject: Mapping[str, Any]) -> set[tuple[str, ...]]:
    """Every requirement of pyproject.toml as (group, name, extras, specifier, marker); the project itself is `.`."""
    from packaging.requirements import Requirement

    project = pyproject["project"]
    me = normalized(project["name"])
    sections: list[tuple[str, list[str]]] = [("", project.get("dependencies", []))]
    sections += [(f"extra:{normalized(k)}", v) for k, v in project.get("optional-dependencies", {}).items()]
    sections += [(f"group:{normalized(k)}", v) for k, v in pyproject.get("dependency-groups", {}).items()]
    found: set[tuple[str, ...]] = set()
    for group, texts in sections:
        for text in texts:
            if not isinstance(text, str):
                raise LockError(f"{group}: only plain requirements are supported, not {text!r}")
            requirement = Requirement(text)
            name = normalized(requirement.name)
            found.add((group, "." if name == me else name, ",".join(sorted(map(normalized, requirement.extras))),
                       str(requirement.specifier), str(requirement.marker or "")))  # fmt: skip
    return found


def locked_requirements(root: Mapping[str, Any]) -> set[tuple[str, ...]]:
    """What uv.lock recorded of pyproject.toml, in the shape of `pyproject_requirements`."""
    from packaging.markers import Marker
    from packaging.specifiers import SpecifierSet

    me = normalized(root["name"])
    metadata = root.get("metadata", {})
    entries = [("", e) for e in metadata.get("requires-dist", [])]
    entries += [(f"group:{normalized(g)}", e) for g, items in metadata.get("requires-dev", {}).items() for e in items]
    found: set[tuple[str, ...]] = set()
    for group, entry in entries:
        marker = entry.get("marker", "")
        # uv writes an extra's requirement with `extra == 'name'` appended to its own marker.
        head, sep, extra = marker.rpartition("extra == '")
        if sep and extra.endswith("'") and group == "":
            group = f"extra:{normalized(extra[:-1])}"
            marker = head.removesuffix(" and ")
        name = normalized(entry["name"])
        found.add((group, "." if name == me else name, ",".join(sorted(map(normalized, entry.get("extras", [])))),
                   str(SpecifierSet(entry.get("specifier", ""))), str(Marker(marker)) if marker else ""))  # fmt: skip
    return found


def consistency_problems(pyproject_path: Path = REPO_ROOT / "pyproject.toml", lock_path: Path = LOCK_FILE) -> list[str]:
    """Why uv.lock does not record pyproject.toml's requirements (empty: it does).

    Compares names (PEP 503), extras, specifiers and markers of the runtime requirements, each extra
    and each dependency group; the project's own name is compared as `.`, so a renamed project
    agrees with a lock written before the rename.
    """
    pyproject = tomllib.loads(pyproject_path.read_text())
    root = read_lock(lock_path).root
    wanted, locked = pyproject_requirements(pyproject), locked_requirements(root)

    def shown(requirement: tuple[str, ...]) -> str:
        group, name, extras, specifier, marker = requirement
        text = f"{name}{f'[{extras}]' if extras else ''}{specifier}{f'; {marker}' if marker else ''}"
        return f"{text} ({group or 'runtime'})"

    problems = [f"not in uv.lock: {shown(r)}" for r in sorted(wanted - locked)]
    problems += [f"in uv.lock, not in pyproject.toml: {shown(r)}" for r in sorted(locked - wanted)]
    extras = sorted(normalized(e) for e in pyproject["project"].get("optional-dependencies", {}))
    if sorted(normalized(e) for e in root.get("metadata", {}).get("provides-extras", [])) != extras:
        problems.append(f"uv.lock's extras differ from pyproject.toml's ({', '.join(extras)})")
    backend = sorted(pyproject.get("build-system", {}).get("requires", []))
    if sorted(pyproject.get("dependency-groups", {}).get("build-backend", [])) != backend:
        problems.append(f"the build-backend group must list [build-system].requires ({', '.join(backend)})")
    return problems


def export_problems() -> list[str]:
    """The requirements files that are not what `make lock` would write from uv.lock now."""
    return [
        f"{name} is not the export of uv.lock: run `make lock`"
        for name, text in expected_files().items()
        if not (REPO_ROOT / name).is_file() or (REPO_ROOT / name).read_text() != text
    ]


def tools() -> str:
    lock = read_lock()
    return wheel_requirements(lock.package(name) for name in TOOLS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", choices=["tools"], help="print the locked lines of uv and packaging")
    parser.add_argument("--upgrade", action="store_true", help="move every package to the newest allowed version")
    parser.add_argument("--check", action="store_true", help="report disagreements; change nothing")
    args = parser.parse_args(argv)
    try:
        if args.command == "tools":
            sys.stdout.write(tools())
            return 0
        if args.check:
            problems = consistency_problems() + export_problems()
            for problem in problems:
                print(problem, file=sys.stderr)
            return 1 if problems else 0
        uv("lock", *(["--upgrade"] if args.upgrade else []), capture=False)
        write_exports()
        problems = consistency_problems()
    except LockError as error:
        print(error, file=sys.stderr)
        return 1
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
