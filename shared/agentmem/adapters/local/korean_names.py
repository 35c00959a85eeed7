"""Korean names written in Latin letters: a given name of two hyphenated syllables beside a Korean surname.

"Seo-yeon Park", "Soo-ah Jung", "Park Seo-yeon": the gazetteer has Korean names in Hangul only, and spaCy
reads "Park" and "Jung" as words, so such names were stored raw where "Min-jun Kim" was found. A
romanised given name has a closed form: two syllables of Korean, the first capitalised, joined by a
hyphen. Each syllable is an optional initial consonant, a vowel and an optional final consonant, in the
Revised Romanization and in the spellings people use for their own names ("Soo", "Hyun", "Young", "Woo").
Such a word beside a surname of the list below (the common surnames, in their usual spellings) is a
person; a hyphenated word alone is not (most two-syllable compounds fit the form: "Re-do", "Yo-yo"),
nor two English words joined ("Pop-up Park", "Set-up Song").
"""

from __future__ import annotations

import functools
import re

from agentmem.adapters.local.english_words import ADJECTIVE, ADVERB, NOUN, VERB, wordnet_words

_INITIAL = r"(?:kk|tt|pp|ss|jj|ch|sh|g|n|d|r|m|b|s|j|k|t|p|h|l|w|y)?"
_VOWEL = r"(?:yeo|yae|wae|you|yoo|woo|ae|ya|eo|ye|oe|yo|wa|wo|we|wi|yu|eu|ui|oo|ou|ee|ea|a|e|o|u|i)"
_FINAL = r"(?:ng|k|n|t|l|m|p|h)?"
_SYLLABLE = rf"{_INITIAL}{_VOWEL}{_FINAL}"
# The common surnames, in the spellings in use (Revised Romanization's among them): about nine in ten
# Koreans bear one of them. One-letter spellings ("O", "U") are left out.
_SURNAMES = (
    "Kim|Gim|Lee|Yi|Rhee|Ri|Park|Pak|Bak|Choi|Choe|Jung|Jeong|Chung|Kang|Gang|Cho|Jo|Yoon|Yun|Jang|Chang|Lim|Im"
    "|Han|Oh|Seo|Suh|Shin|Sin|Kwon|Gwon|Hwang|Ahn|An|Song|Yoo|Yu|Ryu|Hong|Jeon|Chun|Go|Ko|Moon|Mun|Yang|Son"
    "|Sohn|Bae|Baek|Paik|Heo|Huh|Nam|Noh|Roh|Ha|Kwak|Gwak|Sung|Seong|Cha|Joo|Ju|Woo|Min|Na|Jin|Ji|Um|Eom|Chae"
    "|Won|Cheon|Bang|Gong|Hyun|Hyeon|Ham|Pyo|Yeo|Do|Tak|Byun|Byeon|Kil|Gil|Yeom|Seok|Sim|Shim|Ok|Wang|Maeng"
)


@functools.cache
def _pattern() -> re.Pattern[str]:
    # the first syllable capitalised ("Seo"), the second in lower case ("yeon")
    first = rf"(?=[A-Z])(?i:{_SYLLABLE})-(?:{_SYLLABLE})"
    return re.compile(
        rf"(?<![\w\-])(?:(?P<given>{first})[ \t]+(?:{_SURNAMES})|(?:{_SURNAMES})[ \t]+(?P<after>{first}))(?![\w\-])"
    )


def korean_names(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each romanised Korean name in ``text``: a given name and a surname, either order."""
    found = []
    for match in _pattern().finditer(text):
        given = match.group("given") or match.group("after")
        english = wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB)
        # The syllables' own case: "Seo-yeon", not "SEO-YEON" nor "seo-Yeon"; not two English words.
        if given[1:].islower() and not all(part.casefold() in english for part in given.split("-")):
            found.append((match.start(), match.end()))
    return found
