"""Social handles ("@kwame_mensah87") masked as user names, and what follows an "@" in ordinary writing
and in code that is no one's account."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.pii_regex import RegexPiiDetector


def found(text: str) -> set[tuple[str, str]]:
    return {(span.entity_type, span.value) for span in RegexPiiDetector().detect(text)}


@pytest.mark.parametrize(
    ("text", "handle"),
    [
        ("@kwame_mensah87", "kwame_mensah87"),
        ("my insta is @li.na_art", "li.na_art"),
        ("my insta is @li.na_art.", "li.na_art"),
        ("follow me on twitter @deshawn_w", "deshawn_w"),
        ("@kwame_mensah87 thanks for the tip!", "kwame_mensah87"),
        ("(DM @Ama_Owusu, she knows)", "Ama_Owusu"),
        # Alone on its line in a chat, with words after: a handle, not a decorator.
        ("@kwame_mensah87\nthat is me", "kwame_mensah87"),
    ],
)
def test_a_handle_is_a_user_name(text: str, handle: str) -> None:
    assert found(text) == {("USERNAME", handle)}


def test_the_at_sign_stays_outside_the_span() -> None:
    [span] = RegexPiiDetector().detect("follow me on twitter @deshawn_w")
    assert (span.start, span.end) == (22, 31)


@pytest.mark.parametrize(
    "text",
    [
        "@here please review",
        "@channel @everyone @All",
        "@dataclass\nclass Settings:\n    port: int\n",
        '@app.route("/health")\ndef health(): ...',
        "class A:\n    @property\n    def x(self):\n        return 1\n",
        "@Override\npublic String toString() {",
        # Decorators no list holds, known by where they stand: opening a line, before "(" or code.
        '@router.get("/items")\nasync def items(): ...',
        "@retry_twice\ndef fetch():\n    pass",
        "    @timed\n    def run(self): ...",
        "@experimental_api  # not stable yet\ndef f(): ...",
        ">>> @require_partition\n... def foo(G): ...",
        "@Article{merris-1994,",
        'grant.get("@xsi:type")',
        "npm i @aws-cdk/core",
        "we test the @pytest.mark.slow tests nightly",
        "use the @property decorator here",
        "`@dataclass` is nice",
        " * @param name the user's name",
        "@media (max-width: 600px) { body { margin: 0 } }",
        "npm i @types/node",
        "meet @ 5pm at the cafe",
        "see you @10, or @10am, or @5pm, or @7.30",
        "two @2x icons",
        "ends in @gmail.com",
        "a handle over thirty characters: @abcdefghijklmnopqrstuvwxyz12345",
    ],
)
def test_what_follows_an_at_sign_in_writing_and_code_is_no_handle(text: str) -> None:
    assert "USERNAME" not in {kind for kind, _ in found(text)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail ann@example.com", {("EMAIL_ADDRESS", "ann@example.com")}),
        ("https://twitter.com/@deshawn_w", {("URL", "https://twitter.com/@deshawn_w")}),
        ("username: @kwame", {("USERNAME", "@kwame")}),
    ],
)
def test_an_at_sign_inside_an_address_a_url_or_a_named_user_name_is_read_with_it(
    text: str, expected: set[tuple[str, str]]
) -> None:
    assert found(text) == expected
