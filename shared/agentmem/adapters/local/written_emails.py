"""An e-mail address written out so that filters miss it: "wei.zhang at qq dot com", "priya [at] example
[dot] org", "j.smith(at)mail(dot)co(dot)uk". It is the address all the same, masked as EMAIL_ADDRESS.

The at-word is bracketed ("[at]", "(at)", "{at}") or plain (" at "). A bracketed one is nobody's English,
so after it a domain of labels joined by dot-words ("[dot]", "(dot)", "{dot}", " dot ") or dots, ending in
a label of 2-24 letters, is enough. A plain " at " is English everywhere ("look at the dot com bubble"):
there the domain needs a dot-word, its last label must be a real top-level domain of a short list, and
neither the local part nor the domain's first label may be a word that stands before or after "at" in a
sentence ("look", "was", "the", "my"); a top-level domain that is also an English word ("in", "it",
"me") must end the sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentmem.domain.pii import PiiSpan

EMAIL_ADDRESS = "EMAIL_ADDRESS"

_BRACKETED_AT = r"[ \t]*[\[({][ \t]*at[ \t]*[\])}][ \t]*"
_DOT_WORD = r"(?:[ \t]*[\[({][ \t]*dot[ \t]*[\])}][ \t]*|[ \t]+dot[ \t]+)"
_LABEL = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
_WRITTEN_EMAIL = re.compile(
    r"(?<![\w.@+'’-])(?P<local>[^\W_](?:[\w.-]{0,62}[^\W_])?)"
    rf"(?P<at>{_BRACKETED_AT}|[ \t]+at[ \t]+)"
    rf"(?P<domain>{_LABEL}(?:(?:{_DOT_WORD}|\.){_LABEL})*)(?:{_DOT_WORD}|\.)(?P<tld>[^\W\d_]{{2,24}})(?![\w-])",
    re.IGNORECASE,
)
_DOT_WORD_INSIDE = re.compile(_DOT_WORD, re.IGNORECASE)

# Country and generic top-level domains people write out; after a plain " at ", only these end a domain.
TOP_LEVEL_DOMAINS = frozenset(
    {
        "com", "net", "org", "edu", "gov", "mil", "int", "info", "biz", "io", "co", "uk", "de", "fr", "in", "cn",
        "jp", "br", "ru", "au", "ca", "es", "it", "nl", "se", "no", "dk", "fi", "pl", "ch", "at", "be", "pt", "ie",
        "nz", "za", "mx", "ar", "cl", "kr", "tw", "hk", "sg", "my", "id", "ph", "th", "vn", "tr", "gr", "cz", "hu",
        "ro", "il", "ae", "sa", "pk", "ng", "ke", "gh", "eg", "us", "me", "tv", "ai", "app", "dev", "xyz",
    }
)  # fmt: skip
# Top-level domains that are English words too: after a plain " at ", only at the end of a sentence.
_WORD_DOMAINS = frozenset({"in", "it", "at", "be", "no", "my", "id", "us", "me", "co"})
_SENTENCE_END = re.compile(r"[ \t]*(?:[.,;:!?)\]]|$)", re.MULTILINE)
# Words that stand before "at" in English (the subject or its verb: "look at", "I was at", "good at") or
# after it (a determiner: "at the", "at my"), so a plain " at " between them joins no address.
_BEFORE_AT = frozenset(
    {
        "i", "me", "you", "he", "him", "she", "her", "it", "we", "us", "they", "them", "who", "one", "is", "are",
        "was", "were", "be", "been", "am", "not", "and", "or", "but", "only", "just", "even", "still", "right",
        "up", "out", "back", "here", "there", "look", "looks", "looked", "looking", "stare", "stared", "staring",
        "glance", "glanced", "arrive", "arrived", "arriving", "meet", "met", "meeting", "stay", "stayed", "staying",
        "work", "works", "worked", "working", "live", "lives", "lived", "living", "good", "bad", "great", "better",
        "best", "laugh", "laughed", "aim", "aimed", "point", "pointed", "shop", "shopped", "eat", "ate", "start",
        "started", "starts", "end", "ends", "ended", "left", "leave", "home", "school", "sale", "sold", "buy",
        "bought", "price", "priced", "valued", "available", "online", "open", "opens", "opened",
    }
)  # fmt: skip
_AFTER_AT = frozenset(
    {
        "the", "a", "an", "my", "your", "his", "her", "our", "their", "its", "this", "that", "these", "those",
        "some", "any", "every", "each", "no", "one", "all", "least", "most", "last", "first", "once", "home",
        "work", "school", "night", "noon", "midnight", "dawn", "dusk", "times", "risk", "stake", "large", "sea",
    }
)  # fmt: skip


def written_email_spans(text: str) -> Iterator[PiiSpan]:
    """EMAIL_ADDRESS spans of the addresses ``text`` writes out with at- and dot-words."""
    # What a text must hold (lower-cased) for the expression to be worth running: most texts hold none.
    # Tested one by one: any() over a tuple of them cost twice as much (1.2 us a pii-dev turn, 0.5).
    lowered = text.lower()
    if not ("dot" in lowered or "[at]" in lowered or "(at)" in lowered or "{at}" in lowered):
        return
    for match in _WRITTEN_EMAIL.finditer(text):
        bracketed = match.group("at").strip().startswith(("[", "(", "{"))
        if bracketed or _plain_at_joins_an_address(text, match):
            yield PiiSpan(EMAIL_ADDRESS, match.start(), match.end(), match.group(), 0.9 if bracketed else 0.8)


def _plain_at_joins_an_address(text: str, match: re.Match[str]) -> bool:
    """True when a match with a plain " at " is an address and not a sentence's words: a dot-word in the
    domain, a real top-level domain, and no word of a sentence's "... at ..." on either side."""
    domain, tld = match.group("domain"), match.group("tld").lower()
    if _DOT_WORD_INSIDE.search(text, match.start("domain"), match.end()) is None:
        return False  # "I work at amazon.com": a real dot after a plain "at" is a site named, not an address
    if tld not in TOP_LEVEL_DOMAINS or (tld in _WORD_DOMAINS and not _SENTENCE_END.match(text, match.end())):
        return False
    first_label = re.split(r"[ \t.\[({]", domain, maxsplit=1)[0].lower()
    return match.group("local").lower() not in _BEFORE_AT and first_label not in _AFTER_AT
