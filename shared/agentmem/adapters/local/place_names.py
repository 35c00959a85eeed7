"""When a name spaCy calls a person is a place: where the sentence goes to, or the city after a street.

spaCy's news-trained model reads an unfamiliar town as a person ("Mrs. Schwarz flew to Coles", "The
Princess Royal arrived at Lendava", "I am in Akureyri for a business trip", "lives at 92597 Jahu 80,
Liiva"). Such a word is still personal data; what these rules change is its type, so that it is masked as
a LOCATION, as Presidio's labels have it. A given name of the gazetteer stays a person ("said Maslin to
Antonio", "went to Maria's"), and so does a word after a verb that is no movement ("gave it to Coles").
"""

from __future__ import annotations

import re

from agentmem.adapters.local.name_gazetteer import shared_gazetteer

# A verb of going, arriving or staying, an optional adverb, and a preposition of place just before the word.
_GOING_TO = re.compile(
    r"\b(?i:fl[eo]w|flown|fly(?:ing)?|travel(?:l?ed|l?ing|s)?|went|go(?:es|ing)?|gone|move[sd]?|moving"
    r"|arrive[sd]?|arriving|drove|driv(?:e|es|ing|en)|return(?:s|ed|ing)?|land(?:s|ed|ing)?|relocated"
    r"|head(?:s|ed|ing)|stay(?:s|ed|ing)?|live[sd]?|living|based|born|trip|holiday|vacation)"
    r"(?:[ \t]+(?i:back|out|over|down|up|home|here|there|today|yesterday))?"
    r"[ \t]+(?i:to|in|at|from|into|near|via)[ \t]+$"
    # being somewhere, never "from": "I'm in Eskilstuna", "we were in Lendava" ("The flowers were from Evin")
    r"|(?:\b(?i:am|are|was|were)|(?<=\w)['’](?:m|re))[ \t]+(?i:in|near)[ \t]+$"
    # where someone comes from: "originally from Kosihovce", "We moved here from Jablonec nad Jizerou"
    r"|\b(?i:originally|here|there)[ \t]+from[ \t]+$"
    # "grew up in Eckernförde", "visiting Lipik", "home city Trstín", "this morning from Litija", a sentence
    # opening with "In" ("In München they have ...")
    r"|\b(?i:grew[ \t]+up[ \t]+(?:in|at|near)|visit(?:ed|ing|s)?|home[ \t]+(?:city|town|village))[ \t]+$"
    r"|\b(?i:this|that|the[ \t]+next)[ \t]+(?i:morning|afternoon|evening|night|week)[ \t]+from[ \t]+$"
    r"|(?:^|[.!?\n][ \t]*)In[ \t]+$"
)
# Where someone lives, grew up or was born: no person is "in" there, so a given name opening the words
# does not make them a person ("grew up in Shelly Park", "lives in San Nicolo").
_LIVED_IN = re.compile(
    r"\b(?i:grew[ \t]+up|live[sd]?|living|born|raised|based|settled|located|resides?|resided|residing)"
    r"[ \t]+(?i:in|near)[ \t]+$"
)
# After the name: "Lipik was super fun to visit!".
_A_PLACE_TO_VISIT = re.compile(r"[ \t]+(?:is|was|are|were)[ \t]+(?:[a-z]+[ \t]+){0,3}to[ \t]+visit\b")
# Journeys only, for a word spaCy called an organisation: "flew to Kuressaare", "arrived at Lenart", "lives
# in Vantaa" (not "moved to", "I'm in": "We moved to Kubernetes", "I'm in Slack" name software).
_TRAVELLED_TO = re.compile(
    r"\b(?i:fl[eo]w|flown|fly(?:ing)?|travel(?:l?ed|l?ing|s)?|arrive[sd]?|arriving|land(?:ed|ing)|drove"
    r"|live[sd]?|living|based|born|originally|holiday|vacation)"
    r"(?:[ \t]+(?i:back|out|over|down|up|home|here|there|today|yesterday))?[ \t]+(?i:to|in|at|from|near)[ \t]+$"
)
# The street's line ends and the city follows: "92597 Jahu 80, Liiva", "Hauptstr. 5\nBerlin".
_AFTER_A_STREET = re.compile(r"[ \t]*(?:,[ \t]*|\n[ \t]*)")
# An address block's line: quote marks before it, the line before it past one blank line at most, and the
# postal code after it on its line.
_QUOTE_PREFIX = re.compile(r"[ \t]*(?:(?:>|\?{3}|\|)[ \t]*)?")
_NEXT_ADDRESS_LINE = re.compile(r"[ \t]*\n(?:[ \t]*\n)?[ \t]*(?:(?:>|\?{3}|\|)[ \t]*)?")
_POSTCODE_GAP = re.compile(r"[ \t]+")
_POSTCODE = re.compile(r"\d{3}[ \t]?\d{2}|\d{4,6}")
_ONE_WORD = re.compile(r"[^\W\d_][^\W\d_'’\-]*(?:[\-'’][^\W\d_]+)*")
# A place's name of up to three words, link words between them: "Škofja Loka", "Jablonec nad Jizerou".
_PLACE_WORDS = re.compile(
    r"[^\W\d_][^\W\d_'’\-]*(?:[ \t]+(?:(?:nad|pod|am|an|de|del|do|da|la|le|sur|en)[ \t]+)?[^\W\d_][^\W\d_'’\-]*){0,2}"
)


def a_destination(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]``, which spaCy called an organisation, is where a journey goes or someone
    lives: one to three capitalised words no given name opens, after "flew to", "arrived at", "lives in",
    "originally from" ("flew to Kuressaare"). Such an organisation would not be masked at all otherwise."""
    value = text[start:end]
    return (
        value[:1].isupper()
        and _PLACE_WORDS.fullmatch(value) is not None
        and not shared_gazetteer().is_first(value.split()[0])
        and _TRAVELLED_TO.search(text, max(0, start - 40), start) is not None
    )


def on_an_address_line(text: str, start: int, end: int, streets: list[tuple[int, int]]) -> bool:
    """True when ``text[start:end]`` is a line of its own inside an address block, the city's or the
    country's: the line before it ends with a street, a unit or a postcode, or a postcode follows it on its
    line (">Suite 727\\n>Juriborough", ">Valencia 42940"). A block's name comes before its street, so a
    given name here is a place's ("San Nicolo")."""
    value = text[start:end]
    if not value[:1].isupper() or _PLACE_WORDS.fullmatch(value) is None:
        return False
    line_start = text.rfind("\n", 0, start) + 1
    if _QUOTE_PREFIX.fullmatch(text, line_start, start) is None:
        return False
    after_a_street = any(
        street_end <= start and _NEXT_ADDRESS_LINE.fullmatch(text, street_end, start) is not None
        for _, street_end in streets
    )
    before_a_postcode = any(
        street_start > end and _POSTCODE_GAP.fullmatch(text, end, street_start) is not None
        and _POSTCODE.fullmatch(text, street_start, street_end) is not None
        for street_start, street_end in streets
    )
    return after_a_street or before_a_postcode


def where_someone_lives(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` is up to three capitalised words after "lives in", "grew up in", "born
    in" ...: a place, whatever given name opens it ("grew up in Shelly Park")."""
    value = text[start:end]
    return (
        value[:1].isupper()
        and _PLACE_WORDS.fullmatch(value) is not None
        and _LIVED_IN.search(text, max(0, start - 40), start) is not None
    )


def reads_as_a_place(text: str, start: int, end: int, streets: list[tuple[int, int]]) -> bool:
    """True when ``text[start:end]``, which spaCy called a person, is a place: a line of an address block
    (``on_an_address_line``), up to three words after a verb of going or staying and a preposition, or after
    "originally from" ("flew to Coles", "arrived at Lendava", "travelling to Škofja Loka"), or one word right
    after a street address, past its comma ("lives at 92597 Jahu 80, Liiva"). Outside a block, a given name
    of the gazetteer opening it is not."""
    if on_an_address_line(text, start, end, streets):
        return True
    street_ends = [street_end for _, street_end in streets]
    value = text[start:end]
    first = value.split()[0] if value.strip() else ""
    if not value[:1].isupper() or shared_gazetteer().is_first(first):
        return False
    if (
        _PLACE_WORDS.fullmatch(value) is not None
        and all(word[:1].isupper() for word in value.split()[1:] if len(word) > 3)
        and (
            _GOING_TO.search(text, max(0, start - 40), start) is not None
            or _A_PLACE_TO_VISIT.match(text, end) is not None
        )
    ):
        return True
    if _ONE_WORD.fullmatch(value) is None:
        return False
    return any(
        street_end <= start and (separator := _AFTER_A_STREET.fullmatch(text, street_end, start)) is not None
        and separator.group() != ""
        for street_end in street_ends
    )
