""".ci/run stops, before any test, when what the suite needs besides Python cannot be installed.

The script runs from a copy in an empty checkout, with a PATH holding only what it calls before the
tests (so `make test` is never reached) and apt-get or npm replaced by commands that fail as an
unreachable mirror or registry would.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CI_RUN = Path(__file__).resolve().parents[2] / ".ci" / "run"
FAILING = "#!/bin/sh\necho 'E: could not reach the mirror' >&2\nexit 100\n"


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    (tmp_path / "repo" / ".ci").mkdir(parents=True)
    shutil.copy(CI_RUN, tmp_path / "repo" / ".ci" / "run")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "dirname").symlink_to(shutil.which("dirname") or "/usr/bin/dirname")
    return tmp_path


def ci_run(checkout: Path) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash") or "/bin/bash"
    return subprocess.run([bash, str(checkout / "repo" / ".ci" / "run")], capture_output=True, text=True,
                          env={"PATH": str(checkout / "bin"), "CI": "true"}, timeout=60, check=False)


def test_a_failed_chromium_install_fails_the_run(checkout: Path) -> None:
    executable(checkout / "bin" / "apt-get", FAILING)
    result = ci_run(checkout)
    assert result.returncode != 0
    assert "chromium could not be installed" in result.stderr


def test_a_failed_cdk_cli_install_fails_the_run(checkout: Path) -> None:
    executable(checkout / "bin" / "chromium", "#!/bin/sh\nexit 0\n")
    executable(checkout / "bin" / "npm", FAILING)
    result = ci_run(checkout)
    assert result.returncode != 0
    assert "aws-cdk could not be installed" in result.stderr


def test_no_npm_fails_the_run(checkout: Path) -> None:
    executable(checkout / "bin" / "chromium", "#!/bin/sh\nexit 0\n")
    result = ci_run(checkout)
    assert result.returncode != 0
    assert "npm is missing" in result.stderr
