"""A Presidio pattern recognizer for organisations named in the forms companies take.

spaCy's ORG label is too loose to mask with (precision 0.26 on pii-dev: it reads capitalised words
of an editor's comment as organisations), so locally organisations are found by their form only:

- capitalised words ending in a legal form or a business word: "Civic Impulse LLC", "Pixia Corp.",
  "Smith Ltd.", "Abt Associates", "Loveland Technologies", "Allstate Insurance Group"; the legal forms of
  Faker's company providers too ("Leinonen Oyj", "Rožman d.o.o.", ``company_forms``);
- surnames joined as a firm's name: "Marshall, Hernandez and Simpson", "Jones, Smith & Davis";
- a capitalised name after "work(ed) for", "used to work for", "employed by"; when none of its words is
  a given name of the gazetteer, it wins over spaCy's person for the same words ("I work for Thinknum");
- a name whose address is given: "The address of Solarlist is ..." (not "of Maria", a given name);
- the subject of what a sentence says is a firm: "Ramsey-Johnson is an Swedish multinational investment
  bank" (the firm's noun ends the phrase: "is a business owner" is someone);
- a one-word line between a letter's name and its street (``a_firm_line``: ">Flightaware").

A firm's name made of surnames would otherwise be read as people; as an organisation it is masked
all the same, with its own type.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from agentmem.adapters.local.company_forms import company_forms
from agentmem.adapters.local.english_words import ADJECTIVE, ADVERB, NOUN, VERB, wordnet_words
from agentmem.adapters.local.name_gazetteer import shared_gazetteer

if TYPE_CHECKING:
    from presidio_analyzer import PatternRecognizer

ORGANIZATION = "ORGANIZATION"

_LEGAL_FORMS = (
    r"Inc\.?|Incorporated|LLC|L\.L\.C\.|Ltd\.?|Limited|LLP|PLC|plc|Corp\.?|Corporation|Co\.|GmbH|AG|S\.A\.|SA|SAS"
    r"|S\.p\.A\.|SpA|BV|B\.V\.|NV|N\.V\.|Oy|AB|ASA|A/S|ApS|Pty|KG|Sp\. z o\.o\.|s\.r\.o\.|Kft\.?|Zrt\.?"
)
_BUSINESS_WORDS = (
    r"Group|Holdings|Associates|Partners|Technologies|Technology|Analytics|Solutions|Systems|Software|Labs"
    r"|Laboratories|Consulting|Capital|Ventures|Industries|Insurance|Bank|Bancorp|Agency|Research|Networks"
    r"|Media|Pharmaceuticals|Enterprises|Logistics|Services|Movers|Motors|Airlines|Foundation|Institute"
    r"|University|College|Hospital|Clinic|Investments|Advisors|Advisers|Consultants|Communications|Electronics"
    r"|Resources|Brands|Studios|Productions|Entertainment|Therapeutics|Dynamics|Innovations|Robotics"
    r"|Healthcare|Securities|Realty|Properties|Engineering|Manufacturing|Interactive|Publishing"
)
_CAP = r"\p{Lu}[\p{L}\p{M}&'’\-]*"
_NAMES = rf"(?:{_CAP}|\d{{1,4}})(?:[ \t]+(?:{_CAP}|&))*?"


@functools.lru_cache(maxsize=8192)
def a_legal_form(word: str) -> bool:
    """True when ``word`` ends a company's name as a legal form, hand-written or Faker's ("Oyj", "Sønner")."""
    import regex

    hand_written = regex.fullmatch(rf"(?:{_LEGAL_FORMS})", word) is not None
    return hand_written or any(form == word or form.endswith(" " + word) for form in company_forms())


_BUSINESS_WORD = re.compile(rf"(?:{_BUSINESS_WORDS})")


def a_business_word(word: str) -> bool:
    """True when ``word`` ends a company's name as a business word: "Technologies", "Research", "Group"."""
    return _BUSINESS_WORD.fullmatch(word) is not None


# What a firm is, as the head of what a sentence says its subject is: "X is a design agency based in",
# "X is an Hungarian multinational investment bank and financial services company". The noun must end
# the phrase ("is a business owner", "is a bank teller" are people).
_FIRM_NOUNS = (
    r"company|companies|bank|agency|firm|startup|start-up|corporation|conglomerate|retailer|publisher"
    r"|consultancy|insurer|charity|non-profit|nonprofit|organi[sz]ation|airline|cooperative|co-op|enterprise"
    r"|multinational|subsidiary|franchise|distributor|wholesaler|lender|broker|brokerage|fund"
)
_FIRM_PHRASE_END = (
    r"(?=[ \t]*(?:$|[.,;:!?)]|(?:based|that|which|headquartered|in|and|with|founded|from|of|specializing"
    r"|specialising|focused|located|whose|for)\b))"
)


# An address block's line and what follows it: a name's line at most, then a line opening with a house number.
_LINE_START = re.compile(r"[ \t]*(?:(?:>|\?{3}|\|)[ \t]*)?")
_ABOVE_A_STREET = re.compile(
    r"[ \t]*\n(?:[ \t]*(?:>|\?{3}|\|)?[^\d\n]{2,60}\n)?[ \t]*(?:(?:>|\?{3}|\|)[ \t]*)?\d{1,6}[ \t]"
)
_ONE_CAPITALISED_WORD = re.compile(r"[^\W\d_][^\W\d_'’\-]{3,}")


def a_firm_line(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` is one capitalised word, no name of the gazetteer, alone on a line of an
    address block above its street: the firm's line of a letter ("Flightaware" between a name's two lines and
    "077 Mellemstræde 74"). A person's name there has two words or more."""
    value = text[start:end]
    line_start = text.rfind("\n", 0, start) + 1
    return (
        value[:1].isupper()
        and _ONE_CAPITALISED_WORD.fullmatch(value) is not None
        and not shared_gazetteer().is_name(value)
        and _LINE_START.fullmatch(text, line_start, start) is not None
        and _ABOVE_A_STREET.match(text, end) is not None
    )


def build_recognizers() -> list[PatternRecognizer]:
    """Presidio ``PatternRecognizer``s for ORGANIZATION with the patterns above."""
    import regex
    from presidio_analyzer import Pattern, PatternRecognizer

    # Faker's legal forms of every locale first (longest first, "Sp. z o.o. Sp.k." before "Sp. z o.o."),
    # then the hand-written ones.
    legal_forms = "|".join([*(regex.escape(form) for form in company_forms()), _LEGAL_FORMS])

    class _NamedByItsRole(PatternRecognizer):  # type: ignore[misc]
        def invalidate_result(self, pattern_text: str) -> bool:
            """A given name among the words ("I work for Maria Garcia") leaves them to the person rules, and one
            English word or a place WordNet lists to the older rules ("work for Apple")."""
            gazetteer = shared_gazetteer()
            words = [word for word in regex.split(r"[\s]+", pattern_text) if word]
            if len(words) == 1 and words[0].casefold() in wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB):
                return True
            return any(gazetteer.is_first(word) for word in words)

    # Scored above spaCy's 0.85 so that, for the same words, the organisation wins over spaCy's person.
    by_role = [
        Pattern(
            "works for, no given name",
            rf"(?<=\b(?i:work(?:s|ed)?|working)[ \t]+for[ \t]+)(?:{_CAP})(?:[ \t]+{_CAP}){{0,3}}",
            0.9,
        ),
        Pattern(
            "address of",
            rf"(?<=\b(?i:the)[ \t]+address[ \t]+of[ \t]+)(?:{_CAP})(?:[ \t]+{_CAP}){{0,3}}(?=[ \t]+is\b)",
            0.9,
        ),
    ]
    patterns = [
        Pattern("legal form", rf"(?<![\p{{L}}\d])(?:{_NAMES})[ \t]*,?[ \t]+(?:{legal_forms})(?![\p{{L}}\d])", 0.9),
        # Above spaCy's 0.85: for the same words spaCy's person or organisation (not reported) would win, and
        # "Russell Investments", "Palantir Technologies" are firms.
        Pattern("business word", rf"(?<![\p{{L}}\d])(?:{_NAMES})[ \t]+(?:{_BUSINESS_WORDS})\b", 0.86),
        Pattern(
            "is a firm",
            rf"(?:^|(?<=[.!?\n][ \t]*))(?:{_CAP})(?:[ \t]+{_CAP}){{0,3}}(?=[ \t]+(?:is|was)[ \t]+an?[ \t]+"
            rf"(?:[\p{{L}}\-]+[ \t]+){{0,6}}?(?:{_FIRM_NOUNS}){_FIRM_PHRASE_END})",
            0.9,
        ),
        Pattern(
            "works for",
            rf"(?<=\b(?i:work(?:s|ed)?|working)[ \t]+for[ \t]+)(?:{_CAP})(?:[ \t]+{_CAP}){{0,3}}",
            0.6,
        ),
    ]
    class _FirmOfSurnames(PatternRecognizer):  # type: ignore[misc]
        def invalidate_result(self, pattern_text: str) -> bool:
            """A list with a given name in it ("Rudi, Jackson and Campos") is people, not a firm."""
            words = [word for word in regex.split(r"[\s,&]+", pattern_text) if word and word != "and"]
            gazetteer = shared_gazetteer()
            return any(gazetteer.is_first(word) and not gazetteer.is_last(word) for word in words)

    # Not after the word for a firm's founders: "our 3 founders: Morrison, Rogers and Torres" are people.
    firm = Pattern(
        "firm of surnames",
        r"(?<!\b(?i:founders?|co-?founders?|(?:founded|started|co-founded)[ \t]+by)[ \t]*:?[ \t]+)"
        rf"\b{_CAP},[ \t]+{_CAP},?[ \t]+(?:and|&)[ \t]+{_CAP}\b",
        0.75,
    )
    return [
        PatternRecognizer(
            supported_entity=ORGANIZATION,
            name="OrganizationFormRecognizer",
            patterns=patterns,
            global_regex_flags=regex.MULTILINE,
        ),
        _FirmOfSurnames(
            supported_entity=ORGANIZATION,
            name="FirmOfSurnamesRecognizer",
            patterns=[firm],
            global_regex_flags=regex.MULTILINE,
        ),
        _NamedByItsRole(
            supported_entity=ORGANIZATION,
            name="OrganizationByRoleRecognizer",
            patterns=by_role,
            global_regex_flags=regex.MULTILINE,
        ),
    ]
