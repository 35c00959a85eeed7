"""tests/ci_skips.py in a pytest run of its own: with CI=true a skip fails unless it is allow-listed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = """
import tests.ci_skips as ci_skips
from tests.ci_skips import AllowedSkip, pytest_make_collect_report, pytest_runtest_makereport, pytest_terminal_summary

ci_skips.ALLOWED_SKIPS = (
    AllowedSkip("no-such-service-here", "test_mixed.py::test_allowed", "the service is not emulated",
                "nothing emulates it; it is covered elsewhere"),
)
"""
MIXED = """
import pytest

def test_passes():
    pass

def test_allowed():
    pytest.skip("the service is not emulated: try it in AWS")

def test_unexpected():
    pytest.skip("chromium is absent")

def test_same_words_elsewhere():
    pytest.skip("the service is not emulated: but this test is not on the list")
"""


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    # The installed plugins (schemathesis, hypothesis...) take seconds to load and play no part here.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makeconftest(CONFTEST)

    def run(ci: str | None, **files: str) -> pytest.RunResult:
        if ci is None:
            monkeypatch.delenv("CI", raising=False)
        else:
            monkeypatch.setenv("CI", ci)
        pytester.makepyfile(**files)
        return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA")

    return run


def test_in_ci_an_unexpected_skip_fails_the_run_and_shows_its_reason(run) -> None:
    result = run("true", test_mixed=MIXED)
    result.assert_outcomes(passed=1, skipped=1, failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "*skipped in CI and not on the allow-list (tests/ci_skips.py): chromium is absent*",
        "*not on the allow-list*the service is not emulated: but this test is not on the list*",
    ])


def test_in_ci_the_allowed_skips_are_listed_at_the_end_with_their_reasons(run) -> None:
    result = run("true", test_mixed=MIXED)
    result.stdout.fnmatch_lines([
        "*skips allowed in CI (tests/ci_skips.py)*",
        "no-such-service-here: 1 skipped. nothing emulates it; it is covered elsewhere",
    ])


def test_in_ci_a_skipped_module_is_an_error(run) -> None:
    result = run("true", test_module='import pytest\npytest.importorskip("no_such_module_here")\n\n'
                                     'def test_never_runs():\n    pass\n')
    result.assert_outcomes(errors=1)
    assert result.ret != pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*skipped in CI and not on the allow-list*no_such_module_here*"])


def test_outside_ci_a_skip_is_only_a_skip(run) -> None:
    result = run(None, test_mixed=MIXED)
    result.assert_outcomes(passed=1, skipped=3)
    assert result.ret == pytest.ExitCode.OK
    assert "skips allowed in CI" not in result.stdout.str()
