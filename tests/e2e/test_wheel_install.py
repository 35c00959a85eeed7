"""The distribution builds (wheel and sdist, `python -m build`), and the wheel, installed into a clean venv
under its own name, runs `agentmem --help` and `agentmem serve`.

How the clean venv gets its dependencies, and why: the venv is made with `python -m venv --without-pip`
(no system site-packages), the wheel goes in with `pip --python VENV install --no-deps --no-index`, and
the dependencies come from the shared development venv through one `.pth` file naming its site-packages.
That keeps the test offline and a few seconds long: installing the dependencies for real would download
(or copy) about 1.8 GB. It still tests the wheel and not the source tree: PYTHONPATH is dropped, the
venv's own site-packages (with the wheel's `agentmem`) comes first on sys.path, and a path listed in a
`.pth` file is added without processing the `.pth` files inside it, so the development venv's editable
install of `agentmem` never loads. The build itself is `--no-isolation` (the development venv's
setuptools), for the same reason: an isolated build would fetch setuptools from an index.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.integration.serve_process import ServeProcess, serve_command

pytestmark = pytest.mark.slow

DISTRIBUTION = "tenantmem"


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # The default (no --wheel/--sdist) builds the sdist, then the wheel from the unpacked sdist, so the
    # wheel holds what the sdist ships and no stale file of an earlier build.
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
                   check=True, capture_output=True, text=True, timeout=600)
    return out


@pytest.fixture(scope="module")
def venv(dist, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    wheel = next(dist.glob(f"{DISTRIBUTION}-*.whl"))
    # Without PYTHONPATH: the build's egg-info in the source tree would read as "already installed".
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                    "--quiet", str(wheel)], check=True, capture_output=True, text=True, timeout=300,
                   env=clean_environment())
    (site / "development-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    assert (folder / "bin" / "agentmem").exists()
    return folder


def clean_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}


def test_the_build_makes_a_wheel_and_an_sdist_under_the_new_name(dist):
    wheel = next(dist.glob(f"{DISTRIBUTION}-*-py3-none-any.whl"))
    sdist = next(dist.glob(f"{DISTRIBUTION}-*.tar.gz"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "agentmem/cli/main.py" in names and "agentmem/local/wall.html" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "agentmem = agentmem.cli.main:cli" in zipfile.ZipFile(wheel).read(entry_points).decode()
    with tarfile.open(sdist) as archive:
        assert any(n.endswith("/shared/agentmem/cli/main.py") for n in archive.getnames())


def test_the_installed_wheel_is_what_runs_and_knows_its_name(venv):
    probe = ("import agentmem, importlib.metadata as m; "
             "print(agentmem.__file__); print(m.version('tenantmem'))")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True,
                          env=clean_environment(), check=True, timeout=60)
    location, version = done.stdout.split()
    assert Path(location).is_relative_to(venv) and version == "0.1.0"


def test_agentmem_help_runs_from_the_clean_venv(venv):
    done = subprocess.run([str(venv / "bin" / "agentmem"), "--help"], capture_output=True, text=True,
                          env=clean_environment(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Usage: agentmem" in done.stdout and "serve" in done.stdout


def test_agentmem_serve_from_the_clean_venv_answers_health(venv, tmp_path):
    process = ServeProcess(serve_command(tmp_path, [str(venv / "bin" / "agentmem")]), clean_environment())
    try:
        url = process.wait_listening()
        with urllib.request.urlopen(f"{url}/v1/health", timeout=30) as response:
            assert response.status == 200 and json.loads(response.read())["backend"] == "local"
    finally:
        process.stop()
