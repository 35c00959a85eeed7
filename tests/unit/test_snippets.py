"""snippet(): the start of a long run input or output, for the runs listing."""

from __future__ import annotations

from agentmem.domain.snippets import snippet

TOKEN = "{{PII_EMAIL_3f9a1c2b_1}}"


def test_a_short_text_is_kept_whole_and_not_marked_cut() -> None:
    assert snippet("short", 10) == ("short", False)
    assert snippet("x" * 10, 10) == ("x" * 10, False)


def test_a_long_text_is_cut_to_the_limit_with_an_ellipsis() -> None:
    text, cut = snippet("abcdefghij klmnop", 8)
    assert (text, cut) == ("abcdefg…", True)
    assert len(text) == 8


def test_a_cut_never_splits_a_pii_token() -> None:
    source = "Mail me at " + TOKEN + " tomorrow please"
    for limit in range(12, len("Mail me at ") + len(TOKEN) + 1):
        text, cut = snippet(source, limit)
        assert cut and len(text) <= limit
        assert "{{" not in text or TOKEN in text, (limit, text)
    assert snippet(source, len("Mail me at ") + len(TOKEN) + 1) == ("Mail me at " + TOKEN + "…", True)
