"""Log lines name no user: pseudonyms for ids, route templates for paths."""

from __future__ import annotations

from agentmem.domain.log_ids import LOG_ID_LENGTH, log_id
from agentmem.local.asgi import logged_path


def test_a_pseudonym_is_stable_short_hex_and_never_the_id() -> None:
    assert log_id("alice@example.com") == log_id("alice@example.com")
    assert log_id("alice@example.com") != log_id("bob@example.com")
    assert len(log_id("u-1") or "") == LOG_ID_LENGTH and "alice" not in (log_id("alice") or "")
    assert log_id(None) is None


def test_the_access_log_names_the_route_not_the_ids_in_the_path() -> None:
    assert logged_path("DELETE", "/v1/users/alice@example.com") == "/v1/users/{userId}"
    assert logged_path("POST", "/v1/users/a%40b/threads/t1/turns") == "/v1/users/{userId}/threads/{threadId}/turns"
    assert logged_path("GET", "/v1/nothing/alice@example.com") == "(no route)"
    assert logged_path("GET", "/wall") == "/wall"


def test_the_access_log_does_not_copy_the_callers_text_under_pages() -> None:
    # `/wall/%0A...` decodes to a newline: logged as is, it would forge a line of its own.
    assert logged_path("GET", "/wall/\nGET /v1/health 200") == "/wall/*"
    assert logged_path("POST", "/mcp/alice@example.com") == "/mcp/*"
    assert logged_path("POST", "/mcp") == "/mcp"
    assert logged_path("GET", "/static/agentmem-feedback.v1.js") == "/static/*"
