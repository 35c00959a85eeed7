"""The README's `cdk deploy` and `cdk destroy` lines, run with the real CDK CLI up to where AWS is needed.

The CLI (npm package `aws-cdk`, at the version and sha512 of `infra/cdk-cli/package-lock.json`, by
`npm ci`) is installed once into `.cdk-cli/` (by `.ci/run`, or here on first
use); without npm or the registry the test skips and says why. Each README line runs as written,
from the repository root, with no AWS credentials at all:

- `cdk deploy STACK` synthesises the app, selects the stacks (the tenant and, upstream, the platform
  stack it depends on) and stops at "Unable to resolve AWS account": the first thing that needs AWS.
- `cdk destroy STACK` synthesises, selects, and asks for confirmation naming what it would delete;
  the test answers "n" on a terminal.

Any stack-selection error ("more than a single stack", "No stacks match") or synth error fails.
"""

from __future__ import annotations

import os
import pty
import re
import select
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from infra_fixtures import REPO_ROOT

pytestmark = pytest.mark.slow

CLI_DIR = REPO_ROOT / ".cdk-cli"
CLI = CLI_DIR / "node_modules" / ".bin" / "cdk"
# The CLI's version and hash: package.json and package-lock.json there (docs/dependencies.md).
CLI_LOCK = REPO_ROOT / "infra" / "cdk-cli"
CLI_PACKAGE = "aws-cdk (infra/cdk-cli/package-lock.json)"
SELECTION_ERRORS = ("more than a single stack", "No stacks match", "Stack selection is ambiguous")
CREDENTIALS_POINT = "Unable to resolve AWS account"
TIMEOUT = 180


def readme_cdk_lines() -> list[list[str]]:
    """The `cdk deploy|destroy` command lines in the README's "Deploy to AWS" code blocks."""
    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("\n## Deploy to AWS", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["cdk"] and words[1:2] in (["deploy"], ["destroy"]):
                lines.append(words)
    return lines


@pytest.fixture(scope="module")
def cdk() -> Path:
    locked = (CLI_LOCK / "package-lock.json").read_text()
    installed = CLI_DIR / "package-lock.json"
    if CLI.exists() and installed.is_file() and installed.read_text() == locked:
        return CLI
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: cannot install the CDK CLI (aws-cdk) to run the README's commands")
    CLI_DIR.mkdir(exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(CLI_LOCK / name, CLI_DIR / name)
    # npm ci: exactly the lock's version, its sha512 checked.
    result = subprocess.run(
        [npm, "ci", "--prefix", str(CLI_DIR), "--no-audit", "--no-fund"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if result.returncode != 0 or not CLI.exists():
        pytest.skip(f"npm could not install {CLI_PACKAGE} (registry unreachable?): {result.stderr.strip()[-300:]}")
    return CLI


def no_aws_environment(tmp_path: Path) -> dict[str, str]:
    """The caller's environment without any AWS credentials or profile, and no telemetry."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CDK_"))}
    env.update(
        AWS_CONFIG_FILE=str(tmp_path / "no-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-credentials"),
        AWS_EC2_METADATA_DISABLED="true",
        CDK_DISABLE_CLI_TELEMETRY="true",
        JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20",
        CI="true",
    )
    return env


def run_answering(command: list[str], env: dict[str, str], answer: bytes) -> str:
    """Run on a pseudo-terminal (the CLI only asks for confirmation on one) and answer its question."""
    main_fd, child_fd = pty.openpty()
    process = subprocess.Popen(
        command, cwd=REPO_ROOT, env=env, stdin=child_fd, stdout=child_fd, stderr=child_fd, close_fds=True
    )
    os.close(child_fd)
    output, answered, deadline = b"", False, time.monotonic() + TIMEOUT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main_fd], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(main_fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                output += chunk
                if not answered and b"(y/n)" in output:
                    os.write(main_fd, answer)
                    answered = True
            elif process.poll() is not None:
                break
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        os.close(main_fd)
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", output.decode(errors="replace"))


def test_the_readme_names_a_deploy_and_a_destroy_command() -> None:
    verbs = [line[1] for line in readme_cdk_lines()]
    assert "deploy" in verbs and "destroy" in verbs


@pytest.mark.parametrize("line", [w for w in readme_cdk_lines() if w[1] == "deploy"], ids=shlex.join)
def test_readme_deploy_selects_the_tenant_and_its_platform_and_stops_at_credentials(
    cdk: Path, line: list[str], tmp_path: Path
) -> None:
    result = subprocess.run(
        [str(cdk), *line[1:]], cwd=REPO_ROOT, env=no_aws_environment(tmp_path),
        capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    output = result.stdout + result.stderr
    for error in SELECTION_ERRORS:
        assert error not in output, output[-2000:]
    assert "Synthesis time" in output, output[-2000:]
    assert CREDENTIALS_POINT in output, output[-2000:]
    assert "Including dependency stacks: AgentMem-Platform" in output, output[-2000:]


@pytest.mark.parametrize("line", [w for w in readme_cdk_lines() if w[1] == "destroy"], ids=shlex.join)
def test_readme_destroy_selects_only_the_tenant_stack(cdk: Path, line: list[str], tmp_path: Path) -> None:
    output = run_answering([str(cdk), *line[1:]], no_aws_environment(tmp_path), b"n\n")
    for error in SELECTION_ERRORS:
        assert error not in output, output[-2000:]
    prompt = re.search(r"Are you sure you want to delete: (.+?) \(y/n\)", output)
    assert prompt, output[-2000:]
    named = [name for name in line[2:] if not name.startswith("-")]
    assert prompt.group(1).split(", ") == named
