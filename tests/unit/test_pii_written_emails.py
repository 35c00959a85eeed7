"""E-mail addresses written out to get past filters ("wei.zhang at qq dot com"), masked as addresses, and the
English sentences with "at" and "dot" that hold none."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.pii_regex import RegexPiiDetector


def found(text: str) -> set[tuple[str, str]]:
    return {(span.entity_type, span.value) for span in RegexPiiDetector().detect(text)}


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("wei.zhang at qq dot com", "wei.zhang at qq dot com"),
        ("my email is wei.zhang at qq dot com, thanks", "wei.zhang at qq dot com"),
        ("priya [at] example [dot] org", "priya [at] example [dot] org"),
        ("j.smith(at)mail(dot)co(dot)uk.", "j.smith(at)mail(dot)co(dot)uk"),
        ("PRIYA [AT] EXAMPLE [DOT] ORG", "PRIYA [AT] EXAMPLE [DOT] ORG"),
        ("k_mensah {at} proton {dot} me", "k_mensah {at} proton {dot} me"),
        # After a bracketed at-word, real dots join the domain too.
        ("write to priya[at]example.org", "priya[at]example.org"),
        ("email: ann.lee at gmail dot co dot uk", "ann.lee at gmail dot co dot uk"),
        ("email me at wei at qq dot com", "wei at qq dot com"),
        # A top-level domain that is also a word, at the end of the sentence.
        ("reach raj at mail dot in.", "raj at mail dot in"),
    ],
)
def test_an_address_written_out_is_an_email_address(text: str, address: str) -> None:
    assert found(text) == {("EMAIL_ADDRESS", address)}


@pytest.mark.parametrize(
    "text",
    [
        "look at the dot com bubble",
        "meet at home dot",
        "I'm at work. com...",
        # A plain "at" before a site with real dots names the site, not an address.
        "I work at amazon.com",
        "we looked at amazon dot com",
        "she works at a dot com startup in Austin",
        "look at the polka dot in the sky",
        "he was at school dot com",
        # Not a top-level domain after a plain "at"; a word-domain inside a sentence.
        "meet kim at noon dot exe",
        "raj at mail dot in the morning",
        # A dot-word with no at-word.
        "the dot com era was wild, dot org too",
    ],
)
def test_sentences_with_at_and_dot_hold_no_address(text: str) -> None:
    assert "EMAIL_ADDRESS" not in {kind for kind, _ in found(text)}
