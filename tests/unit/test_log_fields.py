"""No log call in the product passes a raw identity or content field.

The log lines' `extra` fields are read from the source: a key that names a user, a thread or
content (`userId`, `threadId`, `input`, `comment`...) is refused; ids go through
`agentmem.domain.log_ids.log_id` under `userHash` / `threadHash`. The privacy scenario test checks
the lines a run really writes; this one covers the branches that scenario does not reach
(consolidation failures, retries).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [*sorted((ROOT / "shared" / "agentmem").rglob("*.py")), *sorted((ROOT / "functions").rglob("*.py"))]
LOG_METHODS = {"debug", "info", "warning", "error", "exception", "critical"}
FORBIDDEN = {
    "userId", "user_id", "threadId", "thread_id", "user", "email", "input", "output", "comment",
    "content", "text", "markdown", "digest", "query",
}
RAW_IDS = {"user_id", "thread_id"}


def _is_raw_id(node: ast.expr) -> bool:
    """`user_id`, `detail.user_id`...: an id passed as is (inside `log_id(...)` it is not reached)."""
    return (isinstance(node, ast.Name) and node.id in RAW_IDS) or (
        isinstance(node, ast.Attribute) and node.attr in RAW_IDS
    )


def forbidden_log_fields(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every `<logger>.<level>(...)` that logs a forbidden `extra` key or a raw id."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in LOG_METHODS:
            continue
        values = list(node.args)
        for keyword in node.keywords:
            if keyword.arg == "extra" and isinstance(keyword.value, ast.Dict):
                values.extend(v for v in keyword.value.values if v is not None)
                for key in keyword.value.keys:
                    if isinstance(key, ast.Constant) and key.value in FORBIDDEN:
                        found.append((node.lineno, key.value))
        found.extend((node.lineno, ast.unparse(v)) for v in values if _is_raw_id(v))
    return found


def test_the_check_finds_a_raw_user_id_in_a_log_call() -> None:
    bad = ast.parse('log.info("profile updated", extra={"userId": user_id, "version": 3})')
    good = ast.parse('log.info("profile updated", extra={"userHash": log_id(user_id), "version": 3})')
    assert forbidden_log_fields(bad) == [(1, "userId"), (1, "user_id")]
    assert forbidden_log_fields(ast.parse('logger.warning("no key for %s", detail.user_id)')) == [(1, "detail.user_id")]
    assert forbidden_log_fields(good) == []


def test_no_log_call_in_the_product_carries_a_raw_id_or_content() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line} {key}"
        for path in SOURCES
        for line, key in forbidden_log_fields(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert len(SOURCES) > 50 and offenders == []
