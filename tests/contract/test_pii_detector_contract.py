"""One contract for every PiiDetector: the local ones (the structured rules alone, and with Presidio
over spaCy) and Amazon Comprehend (under moto).

moto's DetectPiiEntities answers every request with the same three canned entities (NAME at
50-58, EMAIL at 230-259, BANK_ACCOUNT_NUMBER at 334-349) whatever the text, so the contract
states what must hold for any detector on any text: spans inside the text, values equal to the
text they cover, sorted, disjoint, typed from the known set, stable, and usable for masking.
Comprehend-specific behaviour (type mapping, score threshold, chunking) follows the suite.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from agentmem.adapters.aws.comprehend_pii import (
    COMPREHEND_MAX_TEXT_BYTES,
    CombinedPiiDetector,
    ComprehendPiiDetector,
    split_text_for_comprehend,
)
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from agentmem.domain.pii import KNOWN_ENTITY_TYPES, PiiSpan, find_tokens, mask, thread_hash, unmask
from agentmem.ports.pii import PiiDetector
from botocore.stub import Stubber

from tests.contract.conftest import REGION

PARAGRAPH = (
    "Hi, this is Uta Kortig. You said your email is UtaKortig@jourrapide.com. Is that correct? "
    "They're not answering at 780-999-2181, so please call +46 (0)8 928 571 38 instead. "
    "My card 4007070753690781 is expiring this month and my IBAN is GB56HXDO88167774656119. "
    "Here's my SSN: 054-28-6917. The server at 41.173.96.26 keeps blocking me; see "
    "https://www.example.be/help for details. Grüße aus Köln — 東京 too. "
)
TEXTS = [
    "",
    "   \n\t ",
    "No personal data here at all.",
    "Mail ann@example.com",
    PARAGRAPH,
    PARAGRAPH * 3,
    "é" * 60 + PARAGRAPH,  # multi-byte characters before the data shift byte and code-point offsets
]


# "local" is the local backend's detector: the structured rules and Presidio over spaCy together
# (PresidioPiiDetector alone is covered by tests/unit/test_presidio_pii.py).
@pytest.fixture(params=["regex", "local", "comprehend"])
def detector(request: pytest.FixtureRequest) -> Iterator[PiiDetector]:
    if request.param == "regex":
        yield RegexPiiDetector()
    elif request.param == "local":
        yield LocalPiiDetector()
    else:
        request.getfixturevalue("moto")
        yield ComprehendPiiDetector()


def assert_contract(text: str, spans: list[PiiSpan]) -> None:
    for span in spans:
        assert 0 <= span.start < span.end <= len(text)
        assert span.value == text[span.start : span.end]
        assert span.entity_type in KNOWN_ENTITY_TYPES
        assert 0.0 < span.score <= 1.0
    assert spans == sorted(spans, key=lambda span: span.start)
    assert all(first.end <= second.start for first, second in itertools.pairwise(spans))


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_spans_lie_inside_the_text_sorted_disjoint_and_typed(detector: PiiDetector, text: str) -> None:
    assert_contract(text, detector.detect(text))


def test_text_without_characters_has_no_spans(detector: PiiDetector) -> None:
    assert detector.detect("") == []
    assert detector.detect(" \n ") == []


def test_detection_is_stable_for_the_same_text(detector: PiiDetector) -> None:
    assert detector.detect(PARAGRAPH) == detector.detect(PARAGRAPH)


def test_detected_spans_mask_and_unmask_back_to_the_text(detector: PiiDetector) -> None:
    text = PARAGRAPH * 2
    spans = detector.detect(text)
    assert spans, "the paragraph holds personal data every detector finds"
    result = mask(text, spans, thread_hash(b"secret", "acme", "u-1", "t-1"), existing={})
    assert len(find_tokens(result.text)) == len(spans)
    vault = {token: value for token, (_, value) in result.assigned.items()}
    assert unmask(result.text, vault.get) == text


def test_texts_larger_than_one_comprehend_request_are_handled(detector: PiiDetector) -> None:
    text = PARAGRAPH * (2 * COMPREHEND_MAX_TEXT_BYTES // len(PARAGRAPH.encode()) + 1)
    spans = detector.detect(text)
    assert_contract(text, spans)
    assert spans[-1].start > COMPREHEND_MAX_TEXT_BYTES  # data after the first request's limit is seen


# Comprehend specifics


def stubbed_comprehend(min_score: float = 0.5) -> tuple[ComprehendPiiDetector, Stubber]:
    client = boto3.client(
        "comprehend", region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing"
    )
    return ComprehendPiiDetector(client=client, min_score=min_score), Stubber(client)


def entity(text: str, value: str, entity_type: str, score: float = 0.99) -> dict[str, Any]:
    start = text.index(value)
    return {"Type": entity_type, "Score": score, "BeginOffset": start, "EndOffset": start + len(value)}


def test_comprehend_types_are_mapped_to_presidio_names_and_low_scores_dropped() -> None:
    text = "Uta Kortig lives at 6750 Koskikatu 25, call 780-999-2181 or mail uta@jourrapide.com, maybe Bob."
    detector, stubber = stubbed_comprehend(min_score=0.6)
    stubber.add_response(
        "detect_pii_entities",
        {
            "Entities": [
                entity(text, "Uta Kortig", "NAME"),
                entity(text, "6750 Koskikatu 25", "ADDRESS"),
                entity(text, "780-999-2181", "PHONE"),
                entity(text, "uta@jourrapide.com", "EMAIL"),
                entity(text, "Bob", "NAME", score=0.4),
            ]
        },
        {"Text": text, "LanguageCode": "en"},
    )
    with stubber:
        spans = detector.detect(text)
    assert [(span.entity_type, span.value) for span in spans] == [
        ("PERSON", "Uta Kortig"),
        ("STREET_ADDRESS", "6750 Koskikatu 25"),
        ("PHONE_NUMBER", "780-999-2181"),
        ("EMAIL_ADDRESS", "uta@jourrapide.com"),
    ]
    stubber.assert_no_pending_responses()


MOTO_CANNED_ENTITIES = (("PERSON", 50, 58), ("EMAIL_ADDRESS", 230, 259), ("US_BANK_NUMBER", 334, 349))


def test_comprehend_offsets_of_later_chunks_are_shifted_into_the_whole_text(moto: None) -> None:
    text = ("word " * 150 + "\n") * 6  # 4,536 characters, cut into requests of at most 1,000 bytes
    detector = ComprehendPiiDetector(max_request_bytes=1000)
    chunks = split_text_for_comprehend(text, 1000)
    spans = detector.detect(text)
    # moto finds NAME 50-58, EMAIL 230-259 and BANK_ACCOUNT_NUMBER 334-349 in every request.
    assert [(span.entity_type, span.start) for span in spans] == [
        (entity_type, offset + start)
        for offset, chunk in chunks
        for entity_type, start, end in MOTO_CANNED_ENTITIES
        if end <= len(chunk)
    ]
    assert_contract(text, spans)


def test_comprehend_client_is_built_lazily_with_standard_retries(moto: None) -> None:
    detector = ComprehendPiiDetector()
    assert detector._client is None
    client = detector.client
    assert client is detector.client
    assert client.meta.config.retries["mode"] == "standard"


def test_text_is_split_within_the_byte_limit_on_whitespace() -> None:
    text = "Grüße aus Köln. " * 40 + "東京" * 30
    chunks = split_text_for_comprehend(text, 100)
    assert "".join(chunk for _, chunk in chunks) == text
    assert all(len(chunk.encode("utf-8")) <= 100 for _, chunk in chunks)
    assert all(text[offset : offset + len(chunk)] == chunk for offset, chunk in chunks)
    # Every cut but those inside the unbroken run of kanji falls just after a space.
    assert all(chunk.endswith(" ") for _, chunk in chunks if "東" not in chunk)


def test_combined_detector_unions_detectors_and_resolves_overlaps() -> None:
    class FixedDetector:
        def __init__(self, spans: list[PiiSpan]) -> None:
            self.spans = spans

        def detect(self, text: str) -> list[PiiSpan]:
            return list(self.spans)

    text = "Ann Lee, ann@example.com, 6750 Koskikatu 25 Apt. 864"
    address = PiiSpan("STREET_ADDRESS", text.index("6750"), len(text), text[text.index("6750") :], 0.7)
    inner_number = PiiSpan("PHONE_NUMBER", text.index("6750"), text.index("6750") + 4, "6750", 0.9)
    person = PiiSpan("PERSON", 0, 7, "Ann Lee", 0.95)
    combined = CombinedPiiDetector(RegexPiiDetector(), FixedDetector([person, inner_number, address]))
    assert [(span.entity_type, span.value) for span in combined.detect(text)] == [
        ("PERSON", "Ann Lee"),
        ("EMAIL_ADDRESS", "ann@example.com"),
        ("STREET_ADDRESS", "6750 Koskikatu 25 Apt. 864"),
    ]
