"""PII spans and the tokens that stand in for personal data.

Personal data in a conversation is replaced by tokens such as ``{{PII_EMAIL_3f9a1c2b_1}}``
before anything is stored or sent to a model; the originals live in the vault. This module
holds the pure part of that: spans found by a detector, overlap resolution, the token format,
masking and unmasking. It imports nothing from infrastructure.
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import itertools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

# Entity type names follow Microsoft Presidio's, so detectors and evaluation data share one vocabulary.
TOKEN_TYPE_BY_ENTITY: Mapping[str, str] = {
    "EMAIL_ADDRESS": "EMAIL",
    "PHONE_NUMBER": "PHONE",
    "CREDIT_CARD": "CREDIT_CARD",
    "US_SSN": "SSN",
    "IBAN_CODE": "IBAN",
    "IP_ADDRESS": "IP",
    "URL": "URL",
    "PERSON": "PERSON",
    "STREET_ADDRESS": "ADDRESS",
    "ZIP_CODE": "ZIP",
    "LOCATION": "LOCATION",
    "DATE_TIME": "DATE",
    "AGE": "AGE",
    "US_BANK_NUMBER": "BANK_ACCOUNT",
    "ABA_ROUTING_NUMBER": "ROUTING",
    "US_DRIVER_LICENSE": "DRIVER_LICENSE",
    "US_PASSPORT": "PASSPORT",
    "US_ITIN": "ITIN",
    "UK_NHS": "NHS",
    "UK_NINO": "NINO",
    "IN_AADHAAR": "AADHAAR",
    "IN_PAN": "PAN",
    "IN_VOTER": "VOTER_ID",
    "MAC_ADDRESS": "MAC",
    # No detector vendor has a type for a phone's IMEI; agentmem's local rules name it so.
    "IMEI": "IMEI",
    "USERNAME": "USERNAME",
    "PASSWORD": "PASSWORD",
    "CRYPTO": "CRYPTO",
    "ORGANIZATION": "ORG",
    "NRP": "NRP",
    "MEDICAL_LICENSE": "MEDICAL_LICENSE",
    # Types only Amazon Comprehend finds keep Comprehend's names.
    "CREDIT_DEBIT_CVV": "CVV",
    "CREDIT_DEBIT_EXPIRY": "CARD_EXPIRY",
    "PIN": "PIN",
    "AWS_ACCESS_KEY": "AWS_KEY",
    "AWS_SECRET_KEY": "AWS_SECRET",
    "LICENSE_PLATE": "PLATE",
    "VEHICLE_IDENTIFICATION_NUMBER": "VIN",
    "SWIFT_CODE": "SWIFT",
    "CA_SOCIAL_INSURANCE_NUMBER": "CA_SIN",
    "CA_HEALTH_NUMBER": "CA_HEALTH",
    "IN_NREGA": "NREGA",
    "UK_UNIQUE_TAXPAYER_REFERENCE_NUMBER": "UK_UTR",
}

KNOWN_ENTITY_TYPES: frozenset[str] = frozenset(TOKEN_TYPE_BY_ENTITY)

TOKEN_PATTERN = re.compile(
    r"\{\{PII_(?P<type>[A-Z][A-Z0-9_]*)_(?P<thread_hash>[0-9a-f]{8})_(?P<counter>[1-9][0-9]*)\}\}"
)

_THREAD_HASH_LENGTH = 8

# Tokens are scoped to their subject (a user, or an agent's runs without a user), not to a thread:
# the same value of one user is the same token in all of that user's threads, so a keyword search
# over the user's turns finds it across threads, and another user's same value is another token.
SUBJECT_TOKEN_SCOPE = "*"
# User ids start with a letter or digit, so no user can be named like an agent's subject.
AGENT_SUBJECT_PREFIX = "_agent:"


def agent_subject(agent_id: str) -> str:
    """The vault subject owning the personal data of an agent's runs made without a `userId`."""
    return f"{AGENT_SUBJECT_PREFIX}{agent_id}"


def run_subject(agent_id: str, user_id: str | None) -> str:
    """Whose tokens a run's texts get: the run's user, or else the agent's own subject."""
    return user_id if user_id else agent_subject(agent_id)


@dataclass(frozen=True)
class PiiSpan:
    """A piece of personal data found in a text: ``text[start:end] == value`` (end exclusive)."""

    entity_type: str
    start: int
    end: int
    value: str
    score: float = 1.0


@dataclass(frozen=True)
class PiiToken:
    """A token found in a text, parsed back into its parts."""

    token: str
    token_type: str
    thread_hash: str
    counter: int
    start: int
    end: int


@dataclass(frozen=True)
class MaskResult:
    """A masked text and the tokens newly assigned while masking it.

    ``assigned`` maps each new token to ``(entity_type, original value)``; tokens that were
    already known to the thread (passed in as ``existing``) are not repeated here.
    """

    text: str
    assigned: dict[str, tuple[str, str]] = field(default_factory=dict)


class _IntervalSet:
    """Disjoint half-open intervals kept sorted, for overlap checks in O(log n)."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def overlaps(self, start: int, end: int) -> bool:
        index = bisect.bisect_right(self._starts, start)
        if index > 0 and self._ends[index - 1] > start:
            return True
        return index < len(self._starts) and self._starts[index] < end

    def add(self, start: int, end: int) -> None:
        index = bisect.bisect_right(self._starts, start)
        self._starts.insert(index, start)
        self._ends.insert(index, end)


def resolve_overlaps(spans: Iterable[PiiSpan]) -> list[PiiSpan]:
    """Keep a non-overlapping subset of ``spans``, sorted by start.

    Longer spans win over shorter ones they overlap (masking the longer span also hides the
    shorter one's data), then higher score, then the earlier start. Empty spans are dropped.
    """
    ranked = sorted(
        (span for span in spans if span.end > span.start),
        key=lambda span: (-(span.end - span.start), -span.score, span.start, span.entity_type),
    )
    taken = _IntervalSet()
    kept: list[PiiSpan] = []
    for candidate in ranked:
        if not taken.overlaps(candidate.start, candidate.end):
            taken.add(candidate.start, candidate.end)
            kept.append(candidate)
    return sorted(kept, key=lambda span: span.start)


def drop_overlapping(spans: Iterable[PiiSpan], blockers: Iterable[PiiSpan]) -> list[PiiSpan]:
    """The spans that overlap none of ``blockers`` (which need not be disjoint)."""
    candidates = list(spans)
    if not candidates:
        # Most rules find nothing in most texts; the blockers are then not worth sorting (3 us a call).
        return []
    ordered = sorted(blockers, key=lambda span: span.start)
    starts = [span.start for span in ordered]
    # furthest_end[i] is the largest end among the first i + 1 blockers by start
    furthest_end = list(itertools.accumulate((span.end for span in ordered), max))
    kept = []
    for span in candidates:
        before = bisect.bisect_left(starts, span.end)  # blockers starting before the span ends
        if before == 0 or furthest_end[before - 1] <= span.start:
            kept.append(span)
    return kept


def token_type_for(entity_type: str) -> str:
    """The short upper-case name used inside a token for a Presidio entity type."""
    known = TOKEN_TYPE_BY_ENTITY.get(entity_type)
    if known is not None:
        return known
    cleaned = re.sub(r"[^A-Z0-9]+", "_", entity_type.upper()).strip("_")
    if not cleaned or not cleaned[0].isalpha():
        cleaned = "X_" + cleaned if cleaned else "OTHER"
    return cleaned


def thread_hash(secret: bytes, tenant: str, user: str, thread: str) -> str:
    """Eight hex characters naming one thread of one user of one tenant inside tokens.

    It is an HMAC-SHA256 keyed with the tenant's secret over ``tenant/user/thread``, so that
    nobody without the secret can tell which thread a token came from, and it never depends on
    the masked value. Identifiers holding ``/`` are refused because they would make two
    different (tenant, user, thread) triples hash the same message.
    """
    if not secret:
        raise ValueError("thread_hash needs a non-empty tenant secret")
    for name, part in (("tenant", tenant), ("user", user), ("thread", thread)):
        if not part or "/" in part:
            raise ValueError(f"{name} id must be non-empty and free of '/': {part!r}")
    message = f"{tenant}/{user}/{thread}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:_THREAD_HASH_LENGTH]


def format_token(token_type: str, thread_hash_value: str, counter: int) -> str:
    """The token text ``{{PII_<TYPE>_<threadhash>_<n>}}``.

    ``token_type`` may be a short token type (``EMAIL``) or a Presidio entity type
    (``EMAIL_ADDRESS``); the latter is mapped to its short name.
    """
    short_type = token_type if token_type in TOKEN_TYPE_BY_ENTITY.values() else token_type_for(token_type)
    if not re.fullmatch(r"[0-9a-f]{8}", thread_hash_value):
        raise ValueError(f"thread hash must be 8 lower-case hex characters: {thread_hash_value!r}")
    if counter < 1:
        raise ValueError(f"token counter starts at 1: {counter}")
    return f"{{{{PII_{short_type}_{thread_hash_value}_{counter}}}}}"


def find_tokens(text: str) -> list[PiiToken]:
    """Every well-formed token in ``text``, in order of appearance."""
    return [
        PiiToken(
            token=match.group(0),
            token_type=match.group("type"),
            thread_hash=match.group("thread_hash"),
            counter=int(match.group("counter")),
            start=match.start(),
            end=match.end(),
        )
        for match in TOKEN_PATTERN.finditer(text)
    ]


def mask(
    text: str,
    spans: Iterable[PiiSpan],
    thread_hash_value: str,
    existing: Mapping[str, str],
) -> MaskResult:
    """Replace every span of ``text`` by a token of this thread.

    ``existing`` maps an original value to the token the thread already gave it, so the same
    value in the same thread always gets the same token. New values get the next counter after
    the highest counter among the thread's existing tokens. Overlapping spans are resolved with
    :func:`resolve_overlaps`; spans touching a token already in the text are skipped so tokens
    are never nested or cut. The span's value is read from the text at its offsets.
    """
    accepted: list[PiiSpan] = []
    for span in spans:
        if span.start < 0 or span.end > len(text) or span.start > span.end:
            raise ValueError(f"span {span.start}:{span.end} is outside a text of length {len(text)}")
        accepted.append(span)
    tokens_in_text = [PiiSpan("PII_TOKEN", token.start, token.end, token.token) for token in find_tokens(text)]
    resolved = drop_overlapping(resolve_overlaps(accepted), tokens_in_text)

    token_by_value = dict(existing)
    next_counter = 1 + max(
        (
            parsed.counter
            for token in existing.values()
            for parsed in find_tokens(token)
            if parsed.thread_hash == thread_hash_value
        ),
        default=0,
    )
    assigned: dict[str, tuple[str, str]] = {}
    pieces: list[str] = []
    cursor = 0
    for span in resolved:
        value = text[span.start : span.end]
        token = token_by_value.get(value)
        if token is None:
            token = format_token(span.entity_type, thread_hash_value, next_counter)
            next_counter += 1
            token_by_value[value] = token
            assigned[token] = (span.entity_type, value)
        pieces.append(text[cursor : span.start])
        pieces.append(token)
        cursor = span.end
    pieces.append(text[cursor:])
    return MaskResult(text="".join(pieces), assigned=assigned)


def unmask(text: str, lookup: Callable[[str], str | None]) -> str:
    """Replace every token for which ``lookup`` returns a value by that value.

    Tokens that ``lookup`` does not know (another user's, or forged) are left as they are.
    """

    def restore(match: re.Match[str]) -> str:
        original = lookup(match.group(0))
        return match.group(0) if original is None else original

    return TOKEN_PATTERN.sub(restore, text)


# Consistent masking: a value already in a subject's vault is masked wherever it appears as whole words,
# whatever the detector says of that sentence. Candidates are runs of 1 to 4 words (a full name with a
# middle name, "New York City", an e-mail's parts), taken verbatim from the text, so they compare with the
# values exactly as the detector found them (the vault stores values as found, not case-folded).
MAX_VALUE_WORDS = 4
# Longer runs of four words are no name: a bound on the fingerprints computed per text.
MAX_VALUE_CHARS = 80
_WORD = re.compile(r"\w+")


def value_candidates(text: str, max_words: int = MAX_VALUE_WORDS) -> list[str]:
    """The distinct runs of 1 to `max_words` whole words of `text`, as written (separators included).

    A run starts where a word starts and ends where one ends (`\\w+`, so "Ann" is never a run of
    "Annual", while "Ann" is one of "Ann's"); no run reaches into a token already in the text.
    """
    seen: dict[str, None] = {}
    cursor = 0
    for token in [*find_tokens(text), None]:
        end_of_segment = len(text) if token is None else token.start
        words = [match.span() for match in _WORD.finditer(text, cursor, end_of_segment)]
        for index, (start, _) in enumerate(words):
            for last in range(index, min(index + max_words, len(words))):
                end = words[last][1]
                if end - start > MAX_VALUE_CHARS:
                    break
                seen.setdefault(text[start:end], None)
        if token is not None:
            cursor = token.end
    return list(seen)


# Types whose values are words (names, places, organisations): spread by consistent masking only where
# they read as names, never into an identifier or as a common word.
NAME_LIKE_TOKEN_TYPES = frozenset({"PERSON", "LOCATION", "NRP", "ORG"})
# Characters that glue words into one identifier ("marker-2-0-ec3190", "ridge_v2", "a/b", "x.y", "me@x"):
# a known word inside such a run is part of another value, not an occurrence of its own.
_GLUE = "-_/.@:+#="
_NAME_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’.\-\u0300-\u036f])*")
# Capitalised function words that are also given names ("Will", "May"): alone they are far more often the word.
_FUNCTION_WORDS = frozenset({"will", "may", "can", "an", "so", "per", "don", "else", "art", "sun", "bill", "pat"})
_NAME_PARTICLES = frozenset(
    {"van", "von", "de", "da", "das", "del", "della", "der", "den", "di", "do", "dos", "du", "la", "le", "ten",
     "ter", "bin", "ibn", "al", "el", "y", "zu", "mr", "mrs", "ms", "dr", "prof", "sir", "jr", "sr"}
)  # fmt: skip


def spreads_as_name(value: str) -> bool:
    """Whether a name-like value may be masked wherever it appears (consistent masking).

    Only words that look like a name do: letters (and the marks, apostrophes, hyphens of names), no digit,
    at least one capitalised word, or several words. "marker", "ridge" or "x2" found once by mistake must
    not take every later "marker-2-..." or "ridge runner" with them.
    """
    words = value.split()
    if not words or not all(_NAME_WORD.fullmatch(word) for word in words):
        return False
    if len(words) == 1:
        word = words[0]
        return len(word) > 1 and word[0].isupper() and word.casefold() not in _FUNCTION_WORDS
    return True


def name_parts(value: str) -> list[str]:
    """The parts of a full name that alone still name its person: "Olúwaṣeun Adébáyọ̀" -> both words.

    A part is a capitalised word of two letters or more that :func:`spreads_as_name`; particles and titles
    ("van", "Dr") and initials are not. A lower-case name has no parts: alone its words are too often words.
    """
    words = value.split()
    if len(words) < 2:
        return []
    parts: list[str] = []
    for word in (word.rstrip(".,") for word in words):
        # A double-barrelled surname's halves name the person alone too: "Okonkwo" of "Okonkwo-Bassey".
        pieces = [word, *word.split("-")] if "-" in word.strip("-") else [word]
        parts.extend(
            piece for piece in pieces
            if piece.casefold() not in _NAME_PARTICLES and len(piece) > 1 and spreads_as_name(piece)
            and piece not in parts
        )
    return parts


def known_value_spans(text: str, token_by_value: Mapping[str, str]) -> list[PiiSpan]:
    """A span for every whole-word occurrence in `text` of a value of `token_by_value`.

    Occurrences may overlap (a full name and its first name); `mask` keeps the longest. The span's
    type is the one its token names, so a span always agrees with the token it will be replaced by.
    An occurrence glued to other characters into one identifier ("Ann" of "ann-2-x", "ann_v2") is none,
    and a name, place or organisation is spread only when it :func:`spreads_as_name`.
    """
    spans: list[PiiSpan] = []
    glue = re.escape(_GLUE)
    for value, token in token_by_value.items():
        # Most of a subject's values are not in a given text: a substring test finds that without a regex.
        if not value or value not in text:
            continue
        parsed = TOKEN_PATTERN.fullmatch(token)
        token_type = parsed.group("type") if parsed else "PERSON"
        if token_type in NAME_LIKE_TOKEN_TYPES and not spreads_as_name(value):
            continue
        pattern = re.compile(
            rf"(?<!\w)(?<!\w[{glue}])" + re.escape(value) + rf"(?!\w)(?![{glue}]\w)"
        )
        spans.extend(PiiSpan(token_type, m.start(), m.end(), value) for m in pattern.finditer(text))
    return spans
