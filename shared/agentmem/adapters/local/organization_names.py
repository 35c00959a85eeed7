"""A Presidio pattern recognizer for organisations named in the forms companies take.

spaCy's ORG label is too loose to mask with (precision 0.26 on pii-dev: it reads capitalised words
of an editor's comment as organisations), so locally organisations are found by their form only:

- capitalised words ending in a legal form or a business word: "Civic Impulse LLC", "Pixia Corp.",
  "Smith Ltd.", "Abt Associates", "Loveland Technologies", "Allstate Insurance Group"; the legal forms of
  Faker's company providers too ("Leinonen Oyj", "Rožman d.o.o.", ``company_forms``);
- surnames joined as a firm's name: "Marshall, Hernandez and Simpson", "Jones, Smith & Davis";
- a capitalised name after "work(ed) for", "used to work for", "employed by"; when none of its words is
  a given name of the gazetteer, it wins over spaCy's person for the same words ("I work for Thinknum");
- a name whose address is given: "The address of Solarlist is ..." (not "of Maria", a given name).

A firm's name made of surnames would otherwise be read as people; as an organisation it is masked
all the same, with its own type.
"""

from __future__ import annotations

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
    r"|University|College|Hospital|Clinic"
)
_CAP = r"\p{Lu}[\p{L}\p{M}&'’\-]*"
_NAMES = rf"(?:{_CAP}|\d{{1,4}})(?:[ \t]+(?:{_CAP}|&))*?"


def a_legal_form(word: str) -> bool:
    """True when ``word`` ends a company's name as a legal form, hand-written or Faker's ("Oyj", "Sønner")."""
    import regex

    hand_written = regex.fullmatch(rf"(?:{_LEGAL_FORMS})", word) is not None
    return hand_written or any(form == word or form.endswith(" " + word) for form in company_forms())


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
        Pattern("business word", rf"(?<![\p{{L}}\d])(?:{_NAMES})[ \t]+(?:{_BUSINESS_WORDS})\b", 0.7),
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

    firm = Pattern("firm of surnames", rf"\b{_CAP},[ \t]+{_CAP},?[ \t]+(?:and|&)[ \t]+{_CAP}\b", 0.75)
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
