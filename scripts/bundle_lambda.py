#!/usr/bin/env python3
"""Build the Lambda dependency layer (`make bundle`): build/lambda-layer.zip and its stamp.

    .venv/bin/python scripts/bundle_lambda.py           # build (needs PyPI)
    .venv/bin/python scripts/bundle_lambda.py --check   # is the built layer usable, complete? (offline)

The layer holds `infra.bundling.LAYER_REQUIREMENTS` and what they require, at uv.lock's versions
(what the tests ran against), installed from requirements-layer.txt (`make lock` exports it) with
every wheel checked against the lock's sha256, as manylinux (2014, 2_28, 2_34) aarch64 wheels for
CPython `PYTHON_VERSION`: no Docker, no compiler, `--only-binary`, `--require-hashes`, `--no-deps`.
The zip is deterministic (sorted entries, fixed timestamps), so rebuilding the
same pins gives the same hash and CDK uploads nothing new.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from infra.bundling import (
    BUILD_DIR,
    LAYER_MAX_UNZIPPED_BYTES,
    LAYER_PLATFORMS,
    LAYER_REQUIREMENTS_FILE,
    LAYER_STAMP,
    LAYER_ZIP,
    PYTHON_VERSION,
    find_layer,
    layer_import_names,
    layer_recipe,
    layer_requirements_text,
    pinned_requirements,
)
from infra.lockfile import LockError

_PRUNED_DIRS = frozenset({"__pycache__", "bin"})
# Zip timestamps cannot predate 1980.
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def install(requirements_file: Path, target: Path) -> None:
    """pip-install the hashed `requirements_file` as Lambda (arm64, CPython PYTHON_VERSION) wheels into `target`.

    --no-deps: the file is the whole layer, resolved by uv for Lambda's markers; pip would read
    platform markers of this machine instead.
    """
    command = [
        sys.executable, "-m", "pip", "install",
        "--quiet", "--disable-pip-version-check", "--no-compile",
        "--require-hashes", "--no-deps",
        "--target", str(target),
        *(option for platform in LAYER_PLATFORMS for option in ("--platform", platform)),
        "--implementation", "cp",
        "--python-version", PYTHON_VERSION,
        "--only-binary=:all:",
        "-r", str(requirements_file),
    ]  # fmt: skip
    subprocess.run(command, check=True)


def prune(root: Path) -> None:
    """Remove what a Lambda never uses: bytecode caches and console scripts."""
    for directory, subdirs, files in os.walk(root, topdown=True):
        for name in [d for d in subdirs if d in _PRUNED_DIRS]:
            shutil.rmtree(Path(directory) / name)
            subdirs.remove(name)
        for name in files:
            if name.endswith((".pyc", ".pyo")):
                (Path(directory) / name).unlink()


def unzipped_size(root: Path) -> int:
    return sum(path.stat().st_size for path in root.rglob("*") if path.is_file())


def write_zip(root: Path, destination: Path) -> None:
    """Zip `root`'s contents under `python/` (where Lambda looks), byte-for-byte reproducibly."""
    files = sorted(path for path in root.rglob("*") if path.is_file())
    with zipfile.ZipFile(destination, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for path in files:
            info = zipfile.ZipInfo(f"python/{path.relative_to(root).as_posix()}", date_time=_FIXED_TIME)
            executable = path.stat().st_mode & 0o111
            info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def build() -> int:
    try:
        requirements = pinned_requirements()
        current = LAYER_REQUIREMENTS_FILE.is_file() and layer_requirements_text() in LAYER_REQUIREMENTS_FILE.read_text()
    except LockError as error:
        print(error, file=sys.stderr)
        return 1
    if not current:
        print(f"{LAYER_REQUIREMENTS_FILE.name} is not the layer's part of uv.lock: run `make lock`", file=sys.stderr)
        return 1
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lambda-layer-", dir=BUILD_DIR) as scratch:
        site_packages = Path(scratch) / "python"
        print(f"installing {len(requirements)} locked packages for python{PYTHON_VERSION} {', '.join(LAYER_PLATFORMS)}")
        install(LAYER_REQUIREMENTS_FILE, site_packages)
        prune(site_packages)
        size = unzipped_size(site_packages)
        if size > LAYER_MAX_UNZIPPED_BYTES:
            print(f"the layer is {size / 2**20:.0f} MiB unzipped; Lambda allows 250 MiB", file=sys.stderr)
            return 1
        partial = Path(scratch) / "layer.zip"
        write_zip(site_packages, partial)
        sha256 = sha256_of(partial)
        zip_bytes = partial.stat().st_size
        # Stamp last: a zip without a matching stamp is never used.
        LAYER_STAMP.unlink(missing_ok=True)
        shutil.move(partial, LAYER_ZIP)
    stamp = {
        "recipe": layer_recipe(),
        "pinnedRequirements": requirements,
        "sha256": sha256,
        "zipBytes": zip_bytes,
        "unzippedBytes": size,
    }
    LAYER_STAMP.write_text(json.dumps(stamp, indent=2) + "\n")
    print(f"{LAYER_ZIP}: {zip_bytes / 2**20:.1f} MiB zipped, {size / 2**20:.1f} MiB unzipped, sha256 {sha256[:16]}")
    missing = missing_modules(LAYER_ZIP)
    if missing:
        print(f"the layer lacks modules its requirements need here: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


def missing_modules(zip_path: Path) -> list[str]:
    """Top-level modules this venv's copy of the layer's requirements has and the built zip does not."""
    with zipfile.ZipFile(zip_path) as archive:
        present = {name.split("/")[1].split(".")[0] for name in archive.namelist() if name.count("/") >= 1}
    return sorted(name for name in layer_import_names() if name.split(".")[0] not in present)


def check() -> int:
    status = find_layer()
    if status.bundle is None:
        print(status.problem, file=sys.stderr)
        return 1
    if status.drift:
        print(status.drift, file=sys.stderr)
        return 1
    missing = missing_modules(LAYER_ZIP)
    if missing:
        print(f"{LAYER_ZIP} lacks modules its requirements need here: {', '.join(missing)}", file=sys.stderr)
        return 1
    print(f"{LAYER_ZIP}: usable (sha256 {status.bundle.sha256[:16]})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="report whether the built layer is usable; build nothing")
    args = parser.parse_args(argv)
    return check() if args.check else build()


if __name__ == "__main__":
    sys.exit(main())
