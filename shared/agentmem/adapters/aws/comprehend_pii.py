"""PII detection with Amazon Comprehend's DetectPiiEntities, and a detector that combines others.

On AWS the vault uses ``CombinedPiiDetector(RegexPiiDetector(), ComprehendPiiDetector())``: the
regex detector validates structured identifiers with their checksums, Comprehend finds names,
addresses and the other free-text entities.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping
from typing import Any

from agentmem.domain.pii import PiiSpan, resolve_overlaps
from agentmem.ports.pii import PiiDetector

# DetectPiiEntities refuses a Text larger than 100 KB of UTF-8.
COMPREHEND_MAX_TEXT_BYTES = 100_000
_RETRY_MAX_ATTEMPTS = 8

# Comprehend's entity types under Presidio's names, which the rest of agentmem uses.
COMPREHEND_TO_PRESIDIO: Mapping[str, str] = {
    "NAME": "PERSON",
    "ADDRESS": "STREET_ADDRESS",
    "EMAIL": "EMAIL_ADDRESS",
    "PHONE": "PHONE_NUMBER",
    "CREDIT_DEBIT_NUMBER": "CREDIT_CARD",
    "SSN": "US_SSN",
    "IP_ADDRESS": "IP_ADDRESS",
    "URL": "URL",
    "DATE_TIME": "DATE_TIME",
    "AGE": "AGE",
    "BANK_ACCOUNT_NUMBER": "US_BANK_NUMBER",
    "BANK_ROUTING": "ABA_ROUTING_NUMBER",
    "INTERNATIONAL_BANK_ACCOUNT_NUMBER": "IBAN_CODE",
    "PASSPORT_NUMBER": "US_PASSPORT",
    "DRIVER_ID": "US_DRIVER_LICENSE",
    "US_INDIVIDUAL_TAX_IDENTIFICATION_NUMBER": "US_ITIN",
    "UK_NATIONAL_HEALTH_SERVICE_NUMBER": "UK_NHS",
    "UK_NATIONAL_INSURANCE_NUMBER": "UK_NINO",
    "IN_AADHAAR": "IN_AADHAAR",
    "IN_PERMANENT_ACCOUNT_NUMBER": "IN_PAN",
    "IN_VOTER_NUMBER": "IN_VOTER",
    "MAC_ADDRESS": "MAC_ADDRESS",
    "USERNAME": "USERNAME",
    "PASSWORD": "PASSWORD",
    "CREDIT_DEBIT_CVV": "CREDIT_DEBIT_CVV",
    "CREDIT_DEBIT_EXPIRY": "CREDIT_DEBIT_EXPIRY",
    "PIN": "PIN",
    "AWS_ACCESS_KEY": "AWS_ACCESS_KEY",
    "AWS_SECRET_KEY": "AWS_SECRET_KEY",
    "LICENSE_PLATE": "LICENSE_PLATE",
    "VEHICLE_IDENTIFICATION_NUMBER": "VEHICLE_IDENTIFICATION_NUMBER",
    "SWIFT_CODE": "SWIFT_CODE",
    "CA_SOCIAL_INSURANCE_NUMBER": "CA_SOCIAL_INSURANCE_NUMBER",
    "CA_HEALTH_NUMBER": "CA_HEALTH_NUMBER",
    "IN_NREGA": "IN_NREGA",
    "UK_UNIQUE_TAXPAYER_REFERENCE_NUMBER": "UK_UNIQUE_TAXPAYER_REFERENCE_NUMBER",
}


def _utf8_length(char: str) -> int:
    code_point = ord(char)
    if code_point < 0x80:
        return 1
    if code_point < 0x800:
        return 2
    if code_point < 0x10000:
        return 3
    return 4


def split_text_for_comprehend(text: str, max_bytes: int = COMPREHEND_MAX_TEXT_BYTES) -> list[tuple[int, str]]:
    """Cut ``text`` into ``(offset, chunk)`` pieces of at most ``max_bytes`` UTF-8 bytes each.

    A cut falls on the last paragraph break, line break, sentence end or space in the second
    half of the allowed window, so an entity is split between two requests only when a chunk
    has no whitespace at all. Concatenating the chunks gives back ``text``.
    """
    if max_bytes < 4:
        raise ValueError("max_bytes must leave room for one character of UTF-8")
    # byte_end[i] is the UTF-8 size of text[: i + 1]
    byte_end = list(itertools.accumulate(_utf8_length(char) for char in text))
    chunks: list[tuple[int, str]] = []
    start = 0
    while start < len(text):
        bytes_before = byte_end[start - 1] if start else 0
        end = bisect.bisect_right(byte_end, bytes_before + max_bytes)
        if end < len(text):
            window_floor = start + (end - start) // 2
            for boundary in ("\n\n", "\n", ". ", " "):
                cut = text.rfind(boundary, window_floor, end)
                if cut != -1:
                    end = cut + len(boundary)
                    break
        chunks.append((start, text[start:end]))
        start = end
    return chunks


class ComprehendPiiDetector:
    """Finds PII with Amazon Comprehend's DetectPiiEntities, typed with Presidio's names.

    The boto3 client is built on first use (standard retry mode, which backs off on
    throttling) unless one is passed in. Entities scoring below ``min_score`` are dropped.
    """

    def __init__(
        self,
        client: Any = None,
        language: str = "en",
        min_score: float = 0.5,
        max_request_bytes: int = COMPREHEND_MAX_TEXT_BYTES,
    ) -> None:
        self._client = client
        self.language = language
        self.min_score = min_score
        self.max_request_bytes = max_request_bytes

    @property
    def client(self) -> Any:
        """The Comprehend client, built once on first use."""
        if self._client is None:
            import boto3
            from botocore.config import Config

            self._client = boto3.client(
                "comprehend",
                config=Config(retries={"mode": "standard", "max_attempts": _RETRY_MAX_ATTEMPTS}),
            )
        return self._client

    def detect(self, text: str) -> list[PiiSpan]:
        """PII spans of ``text``, sorted and not overlapping; one request per 100 KB chunk."""
        spans: list[PiiSpan] = []
        for offset, chunk in split_text_for_comprehend(text, self.max_request_bytes):
            if not chunk.strip():
                continue
            response = self.client.detect_pii_entities(Text=chunk, LanguageCode=self.language)
            for entity in response.get("Entities", []):
                span = self._span(entity, chunk, offset)
                if span is not None:
                    spans.append(span)
        return resolve_overlaps(spans)

    def _span(self, entity: Mapping[str, Any], chunk: str, offset: int) -> PiiSpan | None:
        score = float(entity.get("Score", 0.0))
        begin, end = entity.get("BeginOffset"), entity.get("EndOffset")
        if score < self.min_score or not isinstance(begin, int) or not isinstance(end, int):
            return None
        # Comprehend counts offsets in code points, as Python indexes str. Offsets outside the
        # chunk cannot be mapped to text; drop them rather than mask characters the service
        # never looked at.
        if not 0 <= begin < end <= len(chunk):
            return None
        comprehend_type = str(entity.get("Type", ""))
        entity_type = COMPREHEND_TO_PRESIDIO.get(comprehend_type, comprehend_type)
        return PiiSpan(entity_type, offset + begin, offset + end, chunk[begin:end], score)


class CombinedPiiDetector:
    """Runs several detectors and keeps the union of their spans, overlaps resolved."""

    def __init__(self, *detectors: PiiDetector) -> None:
        if not detectors:
            raise ValueError("CombinedPiiDetector needs at least one detector")
        self.detectors = detectors

    def detect(self, text: str) -> list[PiiSpan]:
        """Spans from every detector, sorted and not overlapping (longer, then surer, wins)."""
        return resolve_overlaps(span for detector in self.detectors for span in detector.detect(text))
