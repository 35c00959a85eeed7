"""PII tokens: format, parsing, keyed thread hash, masking and unmasking, overlap resolution."""

from __future__ import annotations

import hashlib
import hmac
import itertools

import pytest
from agentmem.domain.pii import (
    KNOWN_ENTITY_TYPES,
    TOKEN_PATTERN,
    TOKEN_TYPE_BY_ENTITY,
    PiiSpan,
    drop_overlapping,
    find_tokens,
    format_token,
    mask,
    resolve_overlaps,
    thread_hash,
    token_type_for,
    unmask,
)
from hypothesis import given, settings
from hypothesis import strategies as st

SECRET = b"tenant-secret-for-tests"
THREAD = thread_hash(SECRET, "acme", "u-1", "t-1")


def span_of(text: str, value: str, entity_type: str = "EMAIL_ADDRESS", occurrence: int = 0) -> PiiSpan:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(value, start + 1)
    return PiiSpan(entity_type, start, start + len(value), value)


# Tokens


def test_token_has_the_documented_shape() -> None:
    assert format_token("EMAIL", "3f9a1c2b", 1) == "{{PII_EMAIL_3f9a1c2b_1}}"


def test_presidio_entity_types_become_short_token_types() -> None:
    assert format_token("EMAIL_ADDRESS", "3f9a1c2b", 2) == "{{PII_EMAIL_3f9a1c2b_2}}"
    assert format_token("PHONE_NUMBER", "3f9a1c2b", 3) == "{{PII_PHONE_3f9a1c2b_3}}"
    assert format_token("US_SSN", "3f9a1c2b", 4) == "{{PII_SSN_3f9a1c2b_4}}"
    assert format_token("STREET_ADDRESS", "3f9a1c2b", 5) == "{{PII_ADDRESS_3f9a1c2b_5}}"


def test_every_known_entity_type_round_trips_through_find_tokens() -> None:
    for counter, entity_type in enumerate(sorted(KNOWN_ENTITY_TYPES), start=1):
        token = format_token(entity_type, THREAD, counter)
        [parsed] = find_tokens(f"before {token} after")
        assert parsed.token == token
        assert parsed.token_type == TOKEN_TYPE_BY_ENTITY[entity_type]
        assert parsed.thread_hash == THREAD
        assert parsed.counter == counter
        assert parsed.start == len("before ")
        assert parsed.end == len("before ") + len(token)


def test_short_token_types_name_one_entity_type_each() -> None:
    assert len(set(TOKEN_TYPE_BY_ENTITY.values())) == len(TOKEN_TYPE_BY_ENTITY)


def test_unknown_entity_types_get_a_pattern_safe_token_type() -> None:
    assert token_type_for("zip code") == "ZIP_CODE"
    assert token_type_for("9LIVES") == "X_9LIVES"
    assert TOKEN_PATTERN.fullmatch(format_token("zip-code/eu", THREAD, 1))


@pytest.mark.parametrize(("thread", "counter"), [("3F9A1C2B", 1), ("3f9a1c2", 1), ("3f9a1c2b", 0)])
def test_format_token_refuses_malformed_parts(thread: str, counter: int) -> None:
    with pytest.raises(ValueError):
        format_token("EMAIL", thread, counter)


def test_find_tokens_ignores_lookalikes() -> None:
    text = "{{PII_EMAIL_3f9a1c2_1}} {{PII_email_3f9a1c2b_1}} {{PII_EMAIL_3f9a1c2b_0}} {PII_EMAIL_3f9a1c2b_1}"
    assert find_tokens(text) == []


def test_find_tokens_reads_types_with_underscores() -> None:
    [parsed] = find_tokens("card {{PII_CREDIT_CARD_0badc0de_12}}.")
    assert (parsed.token_type, parsed.thread_hash, parsed.counter) == ("CREDIT_CARD", "0badc0de", 12)


# Thread hash


def test_thread_hash_is_an_hmac_keyed_with_the_tenant_secret() -> None:
    expected = hmac.new(SECRET, b"acme/u-1/t-1", hashlib.sha256).hexdigest()[:8]
    assert expected == THREAD
    assert hashlib.sha256(b"acme/u-1/t-1").hexdigest()[:8] != THREAD


def test_thread_hash_changes_with_secret_tenant_user_and_thread() -> None:
    hashes = {
        thread_hash(SECRET, "acme", "u-1", "t-1"),
        thread_hash(b"another secret", "acme", "u-1", "t-1"),
        thread_hash(SECRET, "globex", "u-1", "t-1"),
        thread_hash(SECRET, "acme", "u-2", "t-1"),
        thread_hash(SECRET, "acme", "u-1", "t-2"),
    }
    assert len(hashes) == 5
    assert all(len(value) == 8 and int(value, 16) >= 0 for value in hashes)


@pytest.mark.parametrize(
    ("secret", "tenant", "user", "thread"),
    [(b"", "acme", "u", "t"), (SECRET, "ac/me", "u", "t"), (SECRET, "acme", "", "t"), (SECRET, "acme", "u", "t/1")],
)
def test_thread_hash_refuses_empty_secret_and_ambiguous_ids(secret: bytes, tenant: str, user: str, thread: str) -> None:
    with pytest.raises(ValueError):
        thread_hash(secret, tenant, user, thread)


def test_token_never_depends_on_the_masked_value() -> None:
    first = mask("mail ann@example.com", [span_of("mail ann@example.com", "ann@example.com")], THREAD, {})
    second = mask("mail bob@example.org", [span_of("mail bob@example.org", "bob@example.org")], THREAD, {})
    assert first.text == second.text == f"mail {format_token('EMAIL', THREAD, 1)}"
    assert "ann" not in first.text
    assert hashlib.sha256(b"ann@example.com").hexdigest()[:8] not in first.text


# Masking


def test_mask_replaces_spans_and_reports_new_tokens() -> None:
    text = "Mail ann@example.com or call +1-984-182-0190."
    spans = [span_of(text, "ann@example.com"), span_of(text, "+1-984-182-0190", "PHONE_NUMBER")]
    result = mask(text, spans, THREAD, existing={})
    email_token, phone_token = format_token("EMAIL", THREAD, 1), format_token("PHONE", THREAD, 2)
    assert result.text == f"Mail {email_token} or call {phone_token}."
    assert result.assigned == {
        email_token: ("EMAIL_ADDRESS", "ann@example.com"),
        phone_token: ("PHONE_NUMBER", "+1-984-182-0190"),
    }


def test_same_value_in_one_text_gets_one_token() -> None:
    text = "ann@example.com, again ann@example.com"
    spans = [span_of(text, "ann@example.com"), span_of(text, "ann@example.com", occurrence=1)]
    result = mask(text, spans, THREAD, existing={})
    token = format_token("EMAIL", THREAD, 1)
    assert result.text == f"{token}, again {token}"
    assert list(result.assigned) == [token]


def test_value_already_in_the_thread_reuses_its_token_and_new_values_continue_the_count() -> None:
    known = format_token("EMAIL", THREAD, 7)
    text = "ann@example.com and bob@example.org"
    spans = [span_of(text, "ann@example.com"), span_of(text, "bob@example.org")]
    result = mask(text, spans, THREAD, existing={"ann@example.com": known})
    new = format_token("EMAIL", THREAD, 8)
    assert result.text == f"{known} and {new}"
    assert result.assigned == {new: ("EMAIL_ADDRESS", "bob@example.org")}


def test_counters_of_other_threads_do_not_advance_this_thread() -> None:
    other_thread = thread_hash(SECRET, "acme", "u-1", "t-2")
    text = "ann@example.com"
    result = mask(text, [span_of(text, text)], THREAD, existing={"x@y.z": format_token("EMAIL", other_thread, 41)})
    assert result.text == format_token("EMAIL", THREAD, 1)


def test_mask_resolves_overlapping_spans() -> None:
    text = "see https://ann@example.com/x now"
    url = span_of(text, "https://ann@example.com/x", "URL")
    email = span_of(text, "ann@example.com")
    result = mask(text, [email, url], THREAD, existing={})
    assert result.text == f"see {format_token('URL', THREAD, 1)} now"


def test_mask_leaves_tokens_already_in_the_text_intact() -> None:
    existing_token = format_token("PHONE", THREAD, 1)
    text = f"call {existing_token} soon"
    digits_inside_token = PiiSpan("PHONE_NUMBER", text.index("_1}}") + 1, text.index("_1}}") + 2, "1")
    result = mask(text, [digits_inside_token], THREAD, existing={})
    assert result.text == text
    assert result.assigned == {}


def test_mask_refuses_spans_outside_the_text() -> None:
    with pytest.raises(ValueError):
        mask("short", [PiiSpan("PERSON", 2, 9, "ort....")], THREAD, existing={})


# Unmasking


def test_unmask_restores_known_tokens_and_leaves_unknown_ones() -> None:
    known, unknown = format_token("EMAIL", THREAD, 1), format_token("EMAIL", THREAD, 2)
    vault = {known: "ann@example.com"}
    assert unmask(f"to {known} and {unknown}", vault.get) == f"to ann@example.com and {unknown}"


def test_unmask_does_not_reread_restored_values_as_tokens() -> None:
    token = format_token("PERSON", THREAD, 1)
    other = format_token("PERSON", THREAD, 2)
    vault = {token: other, other: "Ann"}
    assert unmask(token, vault.get) == other


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(
        st.tuples(st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=12), st.booleans()),
        max_size=12,
    )
)
def test_unmask_after_mask_gives_back_the_text(pieces: list[tuple[str, bool]]) -> None:
    text, spans, cursor = "", [], 0
    for piece, is_pii in pieces:
        if is_pii and piece:
            spans.append(PiiSpan("PERSON", cursor, cursor + len(piece), piece))
        text += piece
        cursor += len(piece)
    result = mask(text, spans, THREAD, existing={})
    vault = {token: value for token, (_, value) in result.assigned.items()}
    assert unmask(result.text, vault.get) == text
    assert len(set(vault.values())) == len(vault)


# Overlaps


def test_resolve_overlaps_keeps_the_longer_span_then_the_higher_score() -> None:
    long = PiiSpan("STREET_ADDRESS", 0, 20, "x" * 20, 0.5)
    short = PiiSpan("PHONE_NUMBER", 5, 10, "x" * 5, 0.99)
    same_length_low = PiiSpan("PHONE_NUMBER", 25, 30, "x" * 5, 0.4)
    same_length_high = PiiSpan("US_SSN", 26, 31, "x" * 5, 0.9)
    assert resolve_overlaps([short, same_length_low, long, same_length_high]) == [long, same_length_high]


def test_resolve_overlaps_keeps_adjacent_spans_sorted_and_drops_empty_ones() -> None:
    spans = [PiiSpan("B", 5, 9, "b"), PiiSpan("A", 0, 5, "a"), PiiSpan("C", 9, 9, "")]
    assert resolve_overlaps(spans) == [PiiSpan("A", 0, 5, "a"), PiiSpan("B", 5, 9, "b")]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 15), st.floats(0, 1)), max_size=25))
def test_resolve_overlaps_output_is_disjoint_sorted_and_covers_every_input(
    raw: list[tuple[int, int, float]],
) -> None:
    spans = [PiiSpan("T", start, start + length, "v", score) for start, length, score in raw]
    kept = resolve_overlaps(spans)
    assert all(first.end <= second.start for first, second in itertools.pairwise(kept))
    # Every dropped span lost to a kept span it overlaps, so no piece of PII is left bare.
    for span in spans:
        assert any(span.start < other.end and other.start < span.end for other in kept)


def test_drop_overlapping_keeps_only_spans_clear_of_blockers() -> None:
    blockers = [PiiSpan("A", 0, 50, "a"), PiiSpan("B", 10, 12, "b"), PiiSpan("C", 60, 70, "c")]
    candidates = [PiiSpan("X", 20, 30, "x"), PiiSpan("Y", 50, 60, "y"), PiiSpan("Z", 69, 75, "z")]
    assert drop_overlapping(candidates, blockers) == [PiiSpan("Y", 50, 60, "y")]


def test_value_candidates_are_runs_of_whole_words_as_written() -> None:
    from agentmem.domain.pii import value_candidates

    candidates = value_candidates("Met Mary-Jane at St. Louis, Annual")
    assert "Mary-Jane" in candidates and "St. Louis" in candidates and "Mary-Jane at St" in candidates
    assert "Mary" in candidates and "Ann" not in candidates and "Annual" in candidates
    assert "Met Mary-Jane at" in candidates and "Met Mary-Jane at St" not in candidates  # four words at most


def test_value_candidates_leave_tokens_out() -> None:
    from agentmem.domain.pii import value_candidates

    candidates = value_candidates("Ask {{PII_PERSON_0a1b2c3d_1}} Smith")
    assert candidates == ["Ask", "Smith"]


def test_known_value_spans_find_whole_word_occurrences_with_the_tokens_type() -> None:
    from agentmem.domain.pii import known_value_spans

    spans = known_value_spans("Ann, Annual, Ann's", {"Ann": "{{PII_PERSON_0a1b2c3d_1}}"})
    assert [(s.start, s.end, s.entity_type) for s in spans] == [(0, 3, "PERSON"), (13, 16, "PERSON")]
