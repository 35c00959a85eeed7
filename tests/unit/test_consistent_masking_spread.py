"""Consistent masking spreads only what the vault knows, and only where it reads as the value (issue 20).

A surname alone is masked once the full name is in the vault; a word the detector took for a name by
mistake does not take every later identifier or common word with it. Values are made up for this file.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from agentmem.domain.pii import PiiSpan, find_tokens, known_value_spans, name_parts, spreads_as_name

from tests.unit.test_conversation_service import make_service, parts, user_says  # noqa: F401 (fixture)


class FindsPhrase:
    """A detector that reports PERSON for each of its phrases, where it appears (a detector's mistake too)."""

    def __init__(self, *phrases: str) -> None:
        self.phrases = phrases

    def detect(self, text: str) -> list[PiiSpan]:
        spans = []
        for phrase in self.phrases:
            for match in re.finditer(re.escape(phrase), text):
                spans.append(PiiSpan("PERSON", match.start(), match.end(), phrase, 0.9))
        return sorted(spans, key=lambda span: span.start)


def test_a_surname_alone_is_masked_once_the_full_name_is_in_the_vault(parts: dict[str, Any]) -> None:  # noqa: F811
    service = make_service(parts, detector=FindsPhrase("Ekundayo Ọ̀ṣọ́ọ̀sì"))
    first = service.append_turns("u1", "t1", user_says("I am Ekundayo Ọ̀ṣọ́ọ̀sì."))[0].content
    assert "Ekundayo" not in first and "Ọ̀ṣọ́ọ̀sì" not in first
    later = service.append_turns("u1", "t2", user_says("Ọ̀ṣọ́ọ̀sì called, then Ekundayo wrote."))[0].content
    assert "Ọ̀ṣọ́ọ̀sì" not in later and "Ekundayo" not in later
    assert len(find_tokens(later)) == 2
    assert service.unmask("u1", "t2", later) == "Ọ̀ṣọ́ọ̀sì called, then Ekundayo wrote."


def test_a_word_masked_by_mistake_does_not_spread_into_later_identifiers(parts: dict[str, Any]) -> None:  # noqa: F811
    service = make_service(parts, detector=FindsPhrase("Quorvex"))
    assert find_tokens(service.mask_text("u2", "Quorvex-1-0-d41f7a"))  # the detector's mistake, once
    service.mask_text("u2", "Quorvex said hi")  # and the word alone is in the vault
    later = [f"Quorvex-{n}-{m}-e5{n}{m}c0" for n in range(2, 5) for m in range(3)]
    quiet = make_service(parts, detector=FindsPhrase())  # the detector no longer finds it at all
    assert [quiet.mask_text("u2", text) for text in later] == later
    assert quiet.mask_text("u2", "Ask Quorvex.") != "Ask Quorvex."  # the word alone still is its value


def test_a_lower_case_common_word_in_the_vault_is_not_spread(parts: dict[str, Any]) -> None:  # noqa: F811
    service = make_service(parts, detector=FindsPhrase("bramblewick"))
    service.mask_text("u3", "bramblewick")
    quiet = make_service(parts, detector=FindsPhrase())
    assert quiet.mask_text("u3", "the bramblewick trail") == "the bramblewick trail"


def test_what_spreads_as_a_name_and_which_parts_a_full_name_has() -> None:
    assert spreads_as_name("Ọ̀ṣọ́ọ̀sì") and spreads_as_name("Mary-Jane") and spreads_as_name("O'Rourke")
    assert not spreads_as_name("marker") and not spreads_as_name("Quorvex2") and not spreads_as_name("Will")
    assert name_parts("Dr. Ekundayo van Ọ̀ṣọ́ọ̀sì") == ["Ekundayo", "Ọ̀ṣọ́ọ̀sì"]
    assert name_parts("ekundayo osoosi") == [] and name_parts("Ekundayo") == []
    # A double-barrelled surname's halves alone name the person too; a particle stays out.
    assert name_parts("Chidera Nwosu-Ayeni") == ["Chidera", "Nwosu-Ayeni", "Nwosu", "Ayeni"]
    assert name_parts("Rania Al-Masri") == ["Rania", "Al-Masri", "Masri"]


def test_known_values_are_not_found_glued_into_identifiers() -> None:
    token = "{{PII_PERSON_0a1b2c3d_1}}"
    text = "Zelvane, zelvane-3, Zelvane_x, a/Zelvane, Zelvane's and Zelvane."
    spans = known_value_spans(text, {"Zelvane": token})
    assert [text[span.start : span.end + 2] for span in spans] == ["Zelvane, ", "Zelvane's", "Zelvane."]


def test_identifiers_of_sixteen_concurrent_users_are_stored_unmasked(parts: dict[str, Any]) -> None:  # noqa: F811
    service = make_service(parts, detector=LocalPiiDetector())
    identifiers = {f"user{n}": [f"marker-{n}-{m}-{(n * 7919 + m * 104729) % 16**6:06x}" for m in range(6)]
                   for n in range(16)}

    def write(user: str) -> list[str]:
        stored = []
        # A real name in the same thread: the vault is not empty, consistent masking runs.
        service.append_turns(user, "t", user_says("my name is Thaddeus Quimbleworth, hi"))
        for identifier in identifiers[user]:
            stored.append(service.append_turns(user, "t", user_says(f"Stored {identifier} for later."))[0].content)
        return stored

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = dict(zip(identifiers, pool.map(write, identifiers), strict=True))
    for user, stored in results.items():
        assert stored == [f"Stored {identifier} for later." for identifier in identifiers[user]]


def test_no_raw_value_of_the_issues_kinds_is_stored_from_turns(parts: dict[str, Any]) -> None:  # noqa: F811
    service = make_service(parts, detector=LocalPiiDetector())
    says = [
        "I met Adébọ́lá Ọlátúnjí at the market.",
        "Ọlátúnjí said the stall opens at nine.",  # the surname alone, after the full name
        "my colleague ríona mcgillycuddy is visiting",
        "I was born on the 23rd of November 1979, DOB 23/11/1979.",
        "My Eircode is T23 KX8P and my PPS number is 5271938A.",
        "My passport number is PX4417092.",
        "We moved to 45 Phố Hàng Bạc last spring.",
    ]
    stored = " ".join(turn.content for turn in service.append_turns("u9", "t", user_says(*says)))
    for raw in ("Adébọ́lá", "Ọlátúnjí", "ríona", "mcgillycuddy", "1979", "T23 KX8P", "5271938A", "PX4417092",
                "Hàng Bạc"):
        assert raw not in stored, raw
    assert "market" in stored and "stall opens at nine" in stored
