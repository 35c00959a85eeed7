"""uv.lock agrees with pyproject.toml, the requirements files are its exports, and every install is frozen."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def load_lock_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lock_script", REPO_ROOT / "scripts" / "lock.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lock = load_lock_script()


def edited_pyproject(tmp_path: Path, *replacements: tuple[str, str]) -> Path:
    text = (REPO_ROOT / "pyproject.toml").read_text()
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    return path


def test_the_lock_records_every_requirement_of_pyproject_and_no_other() -> None:
    assert lock.consistency_problems() == []


def test_a_requirement_missing_from_the_lock_and_one_only_in_the_lock_are_both_named(tmp_path: Path) -> None:
    pyproject = edited_pyproject(
        tmp_path,
        ('  "pydantic>=2.7",\n', '  "pydantic>=2.7",\n  "attrs>=23",\n'),
        ('  "ruff>=0.6",\n', ""),
        ('"pydantic>=2.7"', '"pydantic>=2.8"'),
    )

    problems = lock.consistency_problems(pyproject)

    assert sorted(problems) == [
        "in uv.lock, not in pyproject.toml: pydantic>=2.7 (runtime)",
        "in uv.lock, not in pyproject.toml: ruff>=0.6 (extra:dev)",
        "not in uv.lock: attrs>=23 (runtime)",
        "not in uv.lock: pydantic>=2.8 (runtime)",
    ]


def test_a_renamed_project_still_agrees_with_the_lock_written_before_the_rename(tmp_path: Path) -> None:
    pyproject = edited_pyproject(
        tmp_path,
        ('name = "tenantmem"', 'name = "tenantmem-renamed"'),
        ('"tenantmem[cdk,', '"tenantmem-renamed[cdk,'),
    )

    assert lock.consistency_problems(pyproject) == []


def test_an_extra_or_build_backend_out_of_step_is_named(tmp_path: Path) -> None:
    pyproject = edited_pyproject(
        tmp_path,
        ('strands = ["strands-agents>=1.20"]\n', 'strands = ["strands-agents>=1.20"]\nspare = []\n'),
        ('requires = ["setuptools>=70.1"]', 'requires = ["setuptools>=70", "wheel"]'),
    )

    problems = lock.consistency_problems(pyproject)

    assert any(p.startswith("uv.lock's extras differ from pyproject.toml's") for p in problems), problems
    assert any(p.startswith("the build-backend group must list [build-system].requires") for p in problems), problems


def test_the_requirements_files_are_the_exports_of_the_lock() -> None:
    assert lock.export_problems() == []


def requirement_blocks(path: Path) -> list[str]:
    """Each requirement of a requirements file, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n\s*", " ", path.read_text())
    lines = [line.strip() for line in text.splitlines()]
    return [line.split(" #", 1)[0] for line in lines if line and not line.startswith("#")]


@pytest.mark.parametrize("name", [*lock.EXPORTS, lock.LAYER_FILE, "requirements-models.txt"])
def test_every_requirement_installed_is_pinned_to_one_version_with_hashes(name: str) -> None:
    blocks = requirement_blocks(REPO_ROOT / name)

    assert blocks
    for block in blocks:
        assert re.match(r"^[A-Za-z0-9._-]+==[^\s;]+", block), block
        assert re.search(r"--hash=sha256:[0-9a-f]{64}", block), block


def test_the_pins_of_the_exports_are_the_locks_versions() -> None:
    locked = {(p["name"], p["version"]) for p in tomllib.loads((REPO_ROOT / "uv.lock").read_text())["package"]}
    for name in [*lock.EXPORTS, lock.LAYER_FILE]:
        for block in requirement_blocks(REPO_ROOT / name):
            package, version = block.split(" ", 1)[0].split(";", 1)[0].split("==")
            assert (package, version) in locked, (name, block)


def test_the_tools_make_lock_installs_first_are_the_locks_uv_and_packaging_with_hashes() -> None:
    blocks = sorted(re.sub(r"\\\n\s*", " ", lock.tools()).splitlines())
    locked = {p["name"]: p for p in tomllib.loads((REPO_ROOT / "uv.lock").read_text())["package"]}

    assert [b.split(" ", 1)[0] for b in blocks] == [f"{n}=={locked[n]['version']}" for n in ("packaging", "uv")]
    for block in blocks:
        name = block.split("==", 1)[0]
        assert set(re.findall(r"--hash=(\S+)", block)) == {w["hash"] for w in locked[name]["wheels"]}


def make_commands(target: str) -> list[str]:
    """The commands `make` would run for `target` in a fresh clone (-B: as if nothing were installed)."""
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    result = subprocess.run([make, "-n", "-B", target], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    return result.stdout.splitlines()


@pytest.mark.parametrize("target", ["serve", "test"])
def test_make_installs_only_from_the_lock_exports_each_wheel_hash_checked(target: str) -> None:
    installs = [c for c in make_commands(target) if " pip install " in c]
    files = [re.findall(r"-r (\S+)", c) for c in installs]

    assert installs, "no pip install in the recipe"
    for command in installs:
        assert "--no-deps" in command, command
        if "-e ." in command:
            # The project itself, built by the locked setuptools (requirements-build.txt) with nothing downloaded.
            assert "--no-build-isolation" in command, command
        else:
            assert "--require-hashes" in command and "--only-binary=:all:" in command, command
    wanted = "requirements-serve.txt" if target == "serve" else "requirements-dev.txt"
    assert [f for group in files for f in group] == ["requirements-build.txt", wanted, "requirements-models.txt"]


def test_make_serve_passes_port_data_and_host_to_agentmem_serve() -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    result = subprocess.run(
        [make, "--no-print-directory", "-n", "-o", ".venv/.installed-serve", "serve", "PORT=18080", "DATA=somedir",
         "HOST=0.0.0.0"],
        cwd=REPO_ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip

    assert result.stdout.splitlines()[-1] == ".venv/bin/agentmem serve --host 0.0.0.0 --port 18080 --data-dir somedir"


def test_ci_installs_python_through_make_test_and_the_cdk_cli_from_its_npm_lock() -> None:
    script = (REPO_ROOT / ".ci" / "run").read_text()

    assert re.search(r"^make test$", script, flags=re.M)
    assert "pip install" not in script
    # The CDK CLI from its npm lock (version and sha512), never the newest in a range.
    assert "npm ci --prefix .cdk-cli" in script and "npm install" not in script
    assert "infra/cdk-cli/package-lock.json" in script


def test_the_serve_install_holds_the_runtime_and_mcp_and_no_test_tool() -> None:
    serve = {b.split("==", 1)[0] for b in requirement_blocks(REPO_ROOT / "requirements-serve.txt")}
    dev = {b.split("==", 1)[0] for b in requirement_blocks(REPO_ROOT / "requirements-dev.txt")}

    assert {"aws-lambda-powertools", "spacy", "presidio-analyzer", "uvicorn", "mcp", "mangum"} <= serve
    assert not {"moto", "pytest", "playwright", "mypy", "ruff", "schemathesis", "aws-cdk-lib", "uv"} & serve
    assert serve <= dev
