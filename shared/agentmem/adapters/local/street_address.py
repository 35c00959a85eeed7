"""A Presidio pattern recognizer for street addresses, in the ways people write them in several countries.

spaCy's English model has no address label, so street addresses are found by Presidio's
``PatternRecognizer`` with these patterns (the ``regex`` module's syntax, case-sensitive):

- a street: a street word before or after capitalised words, or as the end of one word, with a house
  number before or after it: "217 Lovers Lane", "14 Crown Street", "Rua do Arenque 1634",
  "Via dei Fiorentini 17", "C/ Señores Curas 88", "Magasinsgatan 7", "6750 Koskikatu 25",
  "Rákóczi út 13.", "ul. Zamkowa 33". The street words are the common ones of English (USPS
  Publication 28's most used suffixes), the Romance and Slavic languages (before the name) and the
  Germanic, Nordic, Finnish and Hungarian ones (after it, or fused to it);
- a number, capitalised words and another number, without a street word ("30102 Kaevu 94", the
  European "street number" after a postal or house number);
- an apartment, suite or unit ("Apt. 864", "Suite 321", "Unit 5022 Box 1225"), a post-office box,
  the US military's PSC / unit / ship addresses with APO, FPO or DPO and a ZIP code, and a street
  corner ("the corner of Kuusiku 7 and Alexander Flat").

Each street match then takes in what follows it on the same or the next lines when that is the rest
of an address: a unit, a city in capitalised words, a state or province code, a postal code, a
country, so "6750 Koskikatu 25 Apt. 864\\nArtilleros\\n, CO\\n Uruguay 64677" is one span; a city
after a comma on the street's own line and nothing else ("lives at 92597 Jahu 80, Liiva") is left to
spaCy as a place.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    import regex
    from presidio_analyzer import PatternRecognizer, RecognizerResult
    from presidio_analyzer.nlp_engine import NlpArtifacts

from agentmem.adapters.local.english_words import ADJECTIVE, ADVERB, NOUN, VERB, wordnet_words
from agentmem.adapters.local.name_gazetteer import fold, ordinary_words
from agentmem.adapters.local.street_words import StreetWords, street_words
from agentmem.adapters.local.word_case import usually_lower_case

STREET_ADDRESS = "STREET_ADDRESS"
LOCATION = "LOCATION"  # the city after a street, when spaCy does not read it as a place

# Words that name a street after its name, without a house number too ("Baker Street").
_STRONG_SUFFIX_WORDS = (
    "Street|Road|Avenue|Lane|Drive|Boulevard|Terrace|Crescent|Parkway|Highway|Square|Squares|Strasse|Straße"
)
# Words that name a street after its name (English; Publication 28's common suffixes and their abbreviations).
_SUFFIX_WORDS = (
    "Street|St|Str|Road|Rd|Avenue|Ave|Lane|Ln|Drive|Dr|Court|Ct|Boulevard|Blvd|Way|Place|Pl|Square|Squares|Sq"
    "|Terrace|Ter|Crescent|Cres|Close|Parkway|Pkwy|Highway|Hwy|Circle|Cir|Loop|Pass|Point|Pt|Union|Flat|Flats"
    "|Hills?|Dale|Alley|Row|Walk|Trail|Trl|Gardens?|Grove|Mews|Plaza|Ridge|Vista|Heights|Hts|Crossing|Xing"
    "|Junction|Jct|Landing|Meadows?|Mill|Orchard|Park|Path|Pike|Plains?|Port|Ranch|Run|Spring|Springs|Station"
    "|Summit|Track|Turnpike|Valley|View|Village|Wells?|Estates?|Fields?|Green|Harbou?r|Haven|Island|Isle|Lakes?"
    "|Manor|Motorway|Oval|Quay|Rise|Shores?|Spur|Stravenue|Street|Vale|Wharf|Wood|Woods|Causeway|Drives"
    # The rest of Publication 28's suffixes, and the Commonwealth's.
    "|Annex|Arcade|Bayou|Beach|Bend|Bluffs?|Bottom|Branch|Bridge|Brooks?|Burgs?|Bypass|Camp|Canyon|Cape"
    "|Centers?|Centres?|Cliffs?|Club|Commons?|Corners?|Course|Courts|Coves?|Creek|Crest|Curve|Dam|Divide"
    "|Expressway|Extension|Falls|Ferry|Forest|Forges?|Forks?|Fort|Freeway|Gateway|Glens?|Harbors|Hollow"
    "|Inlet|Junctions|Keys?|Knolls?|Lake|Land|Lights?|Locks?|Lodge|Mall|Manors|Mission|Mount|Mountains?|Neck"
    "|Overpass|Parks|Passage|Pines?|Prairie|Radial|Ramp|Rapids?|Rest|Ridges|River|Roads|Route|Shoals?|Skyway"
    "|Spurs|Squares|Stream|Streets|Throughway|Trace|Trafficway|Trailer|Tunnel|Underpass|Unions|Valleys|Viaduct"
    "|Views|Villages|Ville|Walks|Wall|Ways|Courtyard|Reserve|Slope|Towers|Strand|Parade|Esplanade|Promenade"
    "|Grange|Circuit|Chase|Mills|Ride|Turn|Allé"
    "|str|terrasse|kapu|út|útja|utca|u\\.|tér|körút|sor|köz|rkp\\.|rakpart|straat|gracht|laan|weg|plein|kade"
    "|vej|gade|gata|gatan|väg|vägen|veien|vegen|vegur|allé|allee|platz|gasse|straße|strasse|ring|damm|katu"
    "|tie|kuja|polku|kaari|rinne|braut|stræti|stígur|stien|baan|tee|põik"
    # Canada's short "Av" ("1038 Lazard Av"); Turkish types, which Faker has no provider for ("Ala Sokağı 821")
    "|Av|Sokak|Sokağı|Sk\\.|Caddesi|Cad\\.|Cd\\.|Bulvarı|Blv\\.|Yolu|Mahallesi|Mah\\."
    # Germanic and Nordic types written apart and capitalised: "Annis Väg 154", "Gößweinsteiner Gang 772",
    # "Potsdamer Platz 1"
    "|Väg|Vägen|Gata|Gatan|Vej|Gade|Veien|Vegen|Straße|Strasse|Gasse|Platz|Allee|Gang"
)
# Words that name a street before its name (Romance, Slavic, Greek in Latin script).
_PREFIX_WORDS = (
    "Rua|Rue|Via|Viale|Vicolo|Avenida|Avda\\.?|Av\\.?|Avenue|avenue|Calle|C/|Carrer|Paseo|Passeig|Piazza|Piazzale"
    "|Praça|Largo|Corso|Travessa|Estrada|Alameda|Plaza|Plac|Pl\\.|ul\\.|ulica|Ulica|Strada|Str\\.|Bulevardul"
    "|Boulevard|Bd\\.?|Chemin|Route|Allée|Impasse|Quai|Odos|Leoforos|rue|via|Rruga|Ulitsa|ulitsa|Aleja|al\\."
)
# More street types before the name (Spanish, Portuguese, Italian, Indonesian, Vietnamese), some of them
# ordinary words elsewhere ("Gang", "Campo"): a street only with capitalised words and a number after.
_MORE_PREFIX_WORDS = (
    "Camino|Ronda|Glorieta|Urbanización|Vial|Pasaje|Callejón|Carretera|Cuesta|Jardim|Campo|Vila|Parque|Praia"
    "|Morro|Quadra|Distrito|Esplanada|Núcleo|Rodovia|Ladeira|Beco|Lugar|R\\.|Stretto|Borgo|Incrocio|Contrada"
    "|Rotonda|Galleria|Jalan|Jl\\.|Gang|Gg\\.|Đường|Phố|boulevard|plac|pl\\.|os\\.|U|Pod|Nad|Na|Za|K|V"
    # French types of way, which Faker's French providers lack (they write only "rue", "chemin", "avenue",
    # "boulevard"): "891 Cours Du Champ", "240 Venelle Jean Vilar", "778 Prom. De Monbazillac".
    "|Cours|Cour|Voie|Venelle|Ruelle|Sentier|Promenade|Prom\\.|Place|Square|Parc|Passage|Chaussée|Faubourg"
    "|Fbg\\.?|Cité|Esplanade|Montée|Rampe|Traverse|Villa|Hameau|Clos|Mail|Parvis|Rond-Point|Résidence"
    "|Lotissement|Carrefour|Quai|Allée|Impasse"
    # Galician and Spanish ones: "Rúa Madre Soledad de la Cruz, 284", "Travesía del Sol 5", "Jardines de La Cruz"
    "|Rúa|Travesía|Camiño|Avda|Jardines"
    # Dutch "Laan van ..." ("Laan van het Kwekebos 1005")
    "|Laan"
    # Irish ones (road, street, avenue, lane, square, place, drive, way): "14 Bóthar na Trá", "Sráid an Mhuilinn"
    "|Bóthar|Sráid|Ascaill|Lána|Cearnóg|Plás|Céide|Bealach"
    # Mexico's axis roads: "Eje vial Mónaco 072"
    "|Eje[ \\t]+vial|Eje"
)
# Suffixes fused to the street's name: "Søndergade", "Koskikatu", "Brixtonlaan", "Loorenstrasse".
_FUSED_SUFFIXES = (
    "straße|strasse|gasse|weg|laan|straat|gracht|plein|dreef|kade|singel|vej|gade|gata|gatan|väg|vägen|veien"
    "|vegen|vegur|stien|allee|platz|ring|damm|katu|tie|kuja|polku|kaari|braut|stræti|stígur|baan|utca|street"
    "|road|avenue|lane|drive|steeg|pad|hof|stigen|torget|vollen|lia|grenda|holtet|eggen|rud|haugen|bakken|lien"
    "|åsen|bulevardi|kaari|tori|flata|tjernet|stræde|boulevard|vænget|toften|parken|ská|cká|str\\.|-Weg|-Straße|-Strasse|-Str\\.|-Allee|-Platz|-Gasse|-Ring"
)

_CAP = r"\p{Lu}[\p{L}\p{M}'’.\-]*"  # a capitalised word ("O'Neil", "Hauta-aho", "St.")
# A month's name, full or short, after a day's number is a date ("3 March 1979", "12 Sept. 2020").
_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t|tember)?"
    r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\b"
)
_LINK = r"(?:d[aeiou]s?|dei|degli|del|della|de|la|le|les|du|des|e|y|i|of|the|am|an|na|der|im|zum|zur|van|von|het)"


@functools.cache
def _name() -> str:
    """A street's name: capitalised words, with link words and lower-case words between them ("Rua do
    Arenque", "Rohu maantee"), but no English stop word other than a link word ("Ask the driver to stop at
    the corner of Nieuwe Baan 473" is no street before "Nieuwe")."""
    import regex

    stop = sorted(word for word in ordinary_words() if word.isalpha() and not regex.fullmatch(_LINK, word))
    lower = rf"(?!(?:{'|'.join(stop)})\b)\p{{Ll}}+"
    return rf"{_CAP}(?:[ \t]+(?:{_LINK}[ \t]+)?(?:{_CAP}|{lower}))*?"
# A house number: "12", "12A", "90j", "151/727", "1/40/603".
# "S/N" (sin número, sem número) stands for the number of a Spanish or Portuguese address that has none.
_NUMBER = r"(?:\d{1,5}(?:/\d{1,5}){0,2}(?:[ \t]?[A-Za-z](?![\p{L}]))?\.?|[Ss]/[Nn](?![\p{L}\d]))"
_HAND_UNITS = r"Apt\.?|Apartment|Suite|Ste\.?|Unit|Flat|Fl\.?|Box"
_UNIT = rf"(?:{_HAND_UNITS})[ \t]+#?\d{{1,5}}[A-Z]?"


def _alternatives(hand_written: str, words: tuple[str, ...]) -> str:
    """The hand-written alternation and Faker's words (``street_words``), longest first."""
    import regex

    return "|".join([*(regex.escape(word) for word in words), hand_written])


def _prefix_words(words: StreetWords) -> str:
    """The street words a street without a number may open with: the hand-written ones and Faker's lower-case
    words that are no English word ("chemin", "aleja"; not "route", "avenue")."""
    english = wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB)
    return _alternatives(
        _PREFIX_WORDS, tuple(w for w in words.before if w.islower() and w.rstrip(".") not in english)
    )


def _could_hold_a_street(words: StreetWords) -> Callable[[str], bool]:
    """A guard for the "street" pattern (``_street_core``): each of its forms has a house number (a digit, or
    "S/N" for none) or a street word that needs none, after no letter or digit (a strong suffix word, a prefix
    word). Nine LoCoMo turns in ten have neither, and the pattern is the detector's costliest."""
    import regex

    from agentmem.adapters.local.pattern_guards import has_digit

    needed = regex.compile(rf"(?<![\p{{L}}\d])(?:{_STRONG_SUFFIX_WORDS}|{_prefix_words(words)})", flags=regex.MULTILINE)
    return lambda text: has_digit(text) or "s/n" in text.casefold() or needed.search(text) is not None


def _street_core(words: StreetWords) -> str:
    """The street itself, with the hand-written street words and Faker's (see ``street_words``).

    Faker's words before a name need a house number ("Privada Sur Riojas 116"), except lower-case ones
    that are no English word ("chemin de Dijoux", "aleja Lubelska"; not "route", "avenue").
    """
    name = _name()
    suffix_words = _alternatives(_SUFFIX_WORDS, words.after)
    more_prefix_words = _alternatives(_MORE_PREFIX_WORDS, words.before)
    prefix_words = _prefix_words(words)
    fused = rf"\p{{Lu}}[\p{{L}}\p{{M}}\-]*?(?:{_alternatives(_FUSED_SUFFIXES, words.fused)})(?:\b|(?<=\.))"
    return (
        # number Name Suffix [number], Name Suffix number: "217 Lovers Lane", "Rákóczi út 13.", "Baker Street"
        rf"(?:{_NUMBER}[ \t]+){{1,2}}{name}[ \t]+(?:{suffix_words})(?:\b|(?<=\.))(?:[ \t]+{_NUMBER})?"
        # a numbered street: "350 5th Avenue", "1216 57 Street", "225 W 57th St"; not a street word opening a
        # name ("010 63 Avenue du Golf Arabe" is "Avenue du Golf Arabe", below)
        rf"|(?:{_NUMBER}[ \t]+){{1,2}}\d{{1,3}}(?:st|nd|rd|th)?[ \t]+(?:{suffix_words})(?:\b|(?<=\.))"
        rf"(?![ \t]+{_LINK}\b)(?:[ \t]+{_NUMBER})?"
        rf"|{name}[ \t]+(?:{suffix_words})[ \t]+{_NUMBER}"
        rf"|{name}[ \t]+(?:{_STRONG_SUFFIX_WORDS})\b"
        # [number] Prefix Name [number]: "Rua do Arenque 1634", "69 Av Sidi Lakhmi", "31 Rue tachkent"
        rf"|(?:(?:{_NUMBER}[ \t]+){{1,2}})?(?:{prefix_words})[ \t]+(?:{_LINK}[ \t]+)?(?:{_CAP}|\p{{Ll}}+)"
        rf"(?:[ \t]+(?:{_LINK}[ \t]+)?(?:{_CAP}|\d{{1,4}}(?=[ \t]+\p{{L}})))*(?:,?[ \t]+{_NUMBER}(?![\d]))?"
        # [number[,]] More-prefix Name[,] [No.] number: "Stretto Elvira, 155", "Jl. Kutai No. 2",
        # "77, boulevard Grenier"
        rf"|(?:{_NUMBER},?[ \t]+)?(?:{more_prefix_words})[ \t]+(?:{_LINK}[ \t]+){{0,2}}{_CAP}"
        rf"(?:[ \t]+(?:{_LINK}[ \t]+)?{_CAP})*,?[ \t]+(?:No\.?[ \t]*)?{_NUMBER}(?![\d])"
        rf"|{_NUMBER},?[ \t]+(?:{more_prefix_words})[ \t]+(?:{_LINK}[ \t]+)?{_CAP}(?:[ \t]+(?:{_LINK}[ \t]+)?{_CAP})*"
        # [number] Fusedname number: "Søndergade 52", "6750 Koskikatu 25", "Berntsenfaret 51"
        rf"|(?:(?:{_NUMBER}[ \t]+){{1,2}})?(?:{_CAP}[ \t]+)?{fused}[ \t]+{_NUMBER}"
        # number Fusedname: "1026 Kasteelhofstraat", "388 Berglyveien"
        rf"|{_NUMBER}[ \t]+(?:{_CAP}[ \t]+)?{fused}(?![ \t]+\p{{Lu}})"
        # number Name number: "30102 Kaevu 94", "5850 Jana Nerudy 894"; not a date ("3 March 1979")
        rf"|\d{{1,5}}[ \t]+(?!{_MONTHS}){_CAP}(?:[ \t]+{_CAP}){{0,2}}[ \t]+\d{{1,4}}\b\.?"
    )


# What may follow a street in the same address: a unit, a city line, a state code, a postal code, a country.
# A city's own link words besides a street's: "Ostrov nad Ohří", "Črni Vrh nad Idrijo", "Stratford-upon-Avon",
# "Bagnols-sur-Cèze", "Châlons-en-Champagne", "Brezovica pri Ljubljani", "Weil am Rhein".
_CITY_LINK = rf"(?:{_LINK}|nad|pod|pri|pred|ob|bei|upon|on|sur|sous|lès|en|sul|sulla|al|di|in)"
_CITY = rf"{_CAP}(?:[ \t\-]+(?:{_CITY_LINK}[ \t\-]+)?{_CAP}){{0,3}}(?:[ \t]+\([^)\n]{{1,30}}\))?"
_TAIL_PART = rf"(?:{_UNIT}|\p{{Lu}}{{2,3}}\b|\d{{4,6}}\b|nan\b|{_CITY})"
_TAIL = rf"(?:(?:[ \t]*,[ \t]*|[ \t]*\n[ \t]*(?:,[ \t]*)?|[ \t]+)(?:{_TAIL_PART}))*"

_MILITARY = (
    r"(?i:(?:PSC|Unit|CMR)[ \t]+\d{3,5},?[ \t]+Box[ \t]+\d{3,5}[ \t]*\n?[ \t]*(?:APO|FPO|DPO)[ \t]+A[AEP][ \t]+\d{5})"
    r"|US(?:S|NS|NV|CGC)[ \t]+\p{Lu}[\p{L}\p{M}'’\-]*(?:[ \t]+\p{Lu}[\p{L}\p{M}'’\-]*)?[ \t]*\n?[ \t]*"
    r"(?:APO|FPO|DPO)[ \t]+A[AEP][ \t]+\d{5}"
)
_ADDRESS_CUE = (
    r"(?<=\b(?i:address(?:[ \t]+is)?[ \t]*:?|addr\.?[ \t]*:?|mov(?:ed|e|ing)[ \t]+to|li(?:ve|ves|ved|ving)[ \t]+at"
    r"|grew[ \t]+up[ \t]+(?:at|on)|located[ \t]+at|(?:deliver(?:ed)?|send|sent|ship(?:ped)?|post(?:ed)?|mail(?:ed)?)"
    r"(?:[ \t]+(?:it|this|that|them|the[ \t]+\w+))?[ \t]+to|staying[ \t]+at|(?:my|our|new)[ \t]+(?:place|home|flat)"
    r"[ \t]+is(?:[ \t]+at)?|find[ \t]+(?:us|me)[ \t]+at)[ \t]+)"
)
# A name and a house number (not a year), or a house number and a name, with no street word.
# Lower-case words may follow the first ("Mlynské luhy 1255", "Kauri tänav"): only words no English
# dictionary holds, as ``_introduced_end`` cuts the match at the first that one does.
_INTRODUCED = (
    rf"{_CAP}(?:[ \t]+(?:{_LINK}[ \t]+)?(?:{_CAP}|\p{{Ll}}+)){{0,3}},?[ \t]+(?!(?:19|20)\d\d\b){_NUMBER}(?![\d])"
    # the number may follow Vietnamese "Số" ("number"): "Số 37/515 Lê Thánh Tôn"
    rf"|(?:[Ss]ố[ \t]+)?\d{{1,5}}(?:/\d{{1,5}}){{0,2}}[ \t]+{_CAP}"
    rf"(?:[ \t]+(?:{_LINK}[ \t]+)?(?:{_CAP}|\p{{Ll}}+)){{0,3}}"
)
# "The viewing is at Gómez 396": after "is at" (a meeting's place, a room, a gate too), a name and a number
# are an address only when no English word is among them ("is at Gate 5", "is at Room 12" are not).
_LOCATED_CUE = r"(?<=\b(?i:is|are|was|were|'s|’s)[ \t]+at[ \t]+)"
_CORNER_CUE = r"(?<=\b(?i:corner)[ \t]+of[ \t]+)"
# What a number before a lower-case word may count instead of numbering a house ("Aldi 3 times").
_COUNTED = r"(?:times|weeks?|days?|hours?|minutes?|months?|years?|people|items?|pieces?|percent|euros?|dollars?)\b"
# The street words written after a house number as well as after the name: "Hoge Wei 32 St.".
_SHORT_SUFFIXES = r"St|Street|Rd|Road|Ave|Avenue|Blvd|Boulevard|Ln|Lane"
# The next line of an address block, past one blank line at most and the block's quote marks ("> ",
# "??? "): a letter's or an e-mail's address lines.
_NEXT_BLOCK_LINE = r"[ \t]*\n(?:[ \t]*\n)?[ \t]*(?:(?:>|\?{3}|\|)[ \t]*)?"

_PO_BOX = r"\b(?:P\.[ \t]?O\.|PO)[ \t]+Box[ \t]+\d{1,6}\b"


def _number_and_an_english_word(value: str) -> bool:
    """ "48 Factoring" (of "48 Factoring Inc"), "3 Touring": a number and one English word is no street, even
    when the word ends like one ("-ring", "-weg")."""
    parts = value.split()
    english = wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB)
    if len(parts) != 2 or not parts[0].isdigit():
        return False
    word = parts[1].casefold()
    # An inflected word too: "3 Touring" (of "BMW Rad 3 Touring").
    return word in english or any(word.endswith(end) and word[: -len(end)] in english for end in ("ing", "s", "ed"))


# French types of way that are English words too: after a number, they open a street only before a name.
_ENGLISH_LOOKING_TYPES = frozenset(
    {"cours", "cour", "promenade", "place", "square", "parc", "passage", "villa", "mail", "clos", "esplanade",
     "traverse", "rampe", "carrefour", "cité", "sentier", "hameau", "faubourg"}
)  # fmt: skip


def _a_grammar_word_before_a_number(value: str, street_prefixes: regex.Pattern[str]) -> bool:
    """ "During 2017, Allstate ...", "Since 2004": a word of English grammar (a stop word, a month or a
    weekday) right before a number names no street, though "During" ends like one ("-ring"); a street type
    that is one ("Via 20 Settembre 5") still opens a street."""
    parts = value.split(maxsplit=2)
    return (
        len(parts) >= 2
        and parts[1][:1].isdigit()
        and parts[0].casefold() in ordinary_words()
        and street_prefixes.fullmatch(parts[0]) is None
    )


def _a_count_of_things(value: str) -> bool:
    """ "12 Place Cards", "3 Square Meals": a number, a French type of way that is an English word, and only
    common words after it ("cards" is written in lower case) is a count of things; "117 Place Benoit
    Frachon", "1250 Place Verlaine" name someone ("Verlaine" is written capitalised)."""
    import regex

    parts = value.split()
    if len(parts) < 3 or not parts[0].isdigit() or parts[1].casefold() not in _ENGLISH_LOOKING_TYPES:
        return False
    english = wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB)

    def a_common_word(word: str) -> bool:
        key = word.casefold().rstrip(".,")
        if regex.fullmatch(_LINK, key):
            return False  # "1229 Cours Des Anemones": a French street's link word
        key = key if key in english or not key.endswith("s") else key[:-1]  # "Meals"
        return key in ordinary_words() or (key in english and usually_lower_case(key))

    return all(a_common_word(part) for part in parts[2:])


def _pattern_name(result: RecognizerResult) -> str | None:
    explanation = result.analysis_explanation
    return explanation.pattern_name if explanation is not None else None


@functools.cache
def _english_or_ordinary() -> frozenset[str]:
    return wordnet_words(NOUN, VERB, ADJECTIVE, ADVERB) | ordinary_words()


def _introduced_end(value: str, pattern: str | None, after: str) -> int | None:
    """How much of a street found only after a cue, without a street word, is one: up to a lower-case
    English word ("1053 Gasthuisheide please" ends before "please"; "Kauri tänav" is whole), and after "is
    at" nothing when an English word is among its capitalised ones ("is at Gate 5"). None when what is left
    lacks a name or a number, or after "is at" reads as a time (``_a_place_after_is_at``)."""
    if pattern not in ("introduced", "located"):
        return len(value)
    import regex

    english = _english_or_ordinary()
    if pattern == "located" and not _a_place_after_is_at(value, after):
        return None
    end = len(value)
    # After a house number of a lane off a street ("42/118 Hai Bà Trưng", "Số 37/515 Lê Thánh Tôn"), a word
    # that is English only without its diacritics ("Bà") is no reason to read a time or a count after "is at".
    slashed = regex.match(r"(?:[Ss]ố[ \t]+)?\d{1,5}/\d{1,5}[ \t]", value) is not None
    for word in regex.finditer(r"[\p{L}\p{M}'’\-]+", value):
        text = word.group()
        # Without its diacritics a Vietnamese word may spell an English one ("Lập", "Độc"): only Latin-1's
        # accents are taken off ("Café").
        latin_1 = all(ord(char) < 0x100 for char in text)
        if regex.fullmatch(_LINK, text) or not (text.casefold() in english or (latin_1 and fold(text) in english)):
            continue
        if word.start() > 0 and _ROMAN.fullmatch(text) is not None:
            continue  # a numeral after the name, not the pronoun: "Újezd I. 1302", "Karla IV 17"
        if text.islower():
            end = word.start()
            break
        if pattern == "located" and "\n" not in value[: word.start()] and (not slashed or text.casefold() in english):
            return None
    kept = value[:end].rstrip(" \t,")
    if not any(char.isdigit() for char in kept) or not any(char.isupper() for char in kept):
        return None
    return len(kept)


def _a_place_after_is_at(value: str, after: str) -> bool:
    """After "is at", a time or a count is more likely than an address: not an acronym ("is at 7 CET"), not
    a number of an hour first ("is at 6 Heathrow", "is at 7 Uhr"), not a number before a unit ("is at
    Anfield 3 weeks from now")."""
    import regex

    first_line = value.split("\n")[0]
    # A roman numeral numbers a ring road or a district, no acronym: "Ring III 931", "Újezd I. 1302".
    words = first_line.split()
    if any(len(word) > 1 and word.isupper() and _ROMAN.fullmatch(word.rstrip(".")) is None for word in words):
        return False
    leading = regex.match(r"(\d{1,2})\b(?!/)", first_line)  # "6/75 Phan Văn Trị" numbers a house
    if leading is not None and int(leading.group(1)) <= 24:
        return False
    unit = regex.match(r"[ \t]+(\p{Ll}+)", after)
    nouns = wordnet_words(NOUN)
    return unit is None or (unit.group(1) in ordinary_words() or unit.group(1).removesuffix("s") not in nouns)


_ROMAN = re.compile(r"(?:X{0,3})(?:IX|IV|V?I{0,3})")


def _named_without_a_number(value: str) -> bool:
    """A street without a house number is capitalised words, with link words only between them: "Baker
    Street", "chemin de Dijoux", "Via dei Fiorentini"; not "Plaza access" nor "We bought Street socks"."""
    import regex

    if value.split()[0].casefold() in ordinary_words():
        return False  # "The Street kettle"
    words = value.split()[1:]
    return any(word[:1].isupper() for word in words) and all(
        word[:1].isupper() or regex.fullmatch(_LINK, word) is not None for word in words[:-1]
    )


def build_recognizer() -> PatternRecognizer:
    """Presidio's ``PatternRecognizer`` for STREET_ADDRESS with the patterns above."""
    import regex
    from presidio_analyzer import Pattern, PatternRecognizer, RecognizerResult

    from agentmem.adapters.local.pattern_guards import GuardedPattern, has_any_word

    words = street_words()
    street_core = _street_core(words)
    name = _name()
    # A flat, floor or studio before the street: "Studio 90j\nPatel Roads", "Level 7 714 Kyle Little".
    # Not after a capitalised word: "Mrs. Jennifer Alcaraz Suite 541" ends a name, then the unit.
    not_after_a_name = r"(?<!\p{Lu}[\p{L}\p{M}]*[ \t])"
    unit = rf"(?:{_alternatives(_HAND_UNITS, words.units)})[ \t]+#?\d{{1,5}}[A-Za-z]?"
    unit_before = rf"(?:{not_after_a_name}{unit},?[ \t]*\n?[ \t]*)?"
    # One of the two streets of "the corner of A and B", its street word after the number too ("Nieuwe Baan
    # 473 St.").
    suffix_words = _alternatives(_SUFFIX_WORDS, words.after)
    corner_part = rf"(?:{street_core}|{name}(?:[ \t]+{_NUMBER})?)(?:[ \t]+(?:{suffix_words})\b\.?)?"
    # Street words of three letters or more: "Send the report to K Smith" (Czech "K") is no street.
    cued_prefix_words = "|".join(
        word
        for word in _alternatives(_PREFIX_WORDS + "|" + _MORE_PREFIX_WORDS, words.before).split("|")
        if len(word.replace("\\", "").rstrip(".")) >= 3
    )
    patterns = [
        # an abbreviation's full stop may come before the rest: "123 Main St. Apt 4B, Springfield, IL 62704"
        GuardedPattern("street", rf"(?<![\p{{L}}\d]){unit_before}(?:{street_core})\.?(?:{_TAIL})(?![\p{{L}}\d])", 0.9,
                       flags=regex.MULTILINE, could_match=_could_hold_a_street(words)),
        # A unit, then a street without a number: "Studio 2\nPalmer Plaza", "Flat 4\nSmith Field".
        Pattern(
            "unit and street",
            rf"{not_after_a_name}\b{unit},?[ \t]*\n?[ \t]*{name}[ \t]+(?:{suffix_words})\b(?:{_TAIL})",
            0.9,
        ),
        # After words that introduce an address, a name and a house number are one without a street word:
        # "moved to Bramlei 4", "address: Ševčíkova 454", "lives at 83 Võ Văn Tần".
        Pattern("introduced", rf"{_ADDRESS_CUE}(?:{_INTRODUCED})(?:{_TAIL})(?![\p{{L}}\d])", 0.85),
        # After words that introduce an address, a street word before capitalised words needs no number:
        # "moved to Vereda Campos", "Delivery address: boulevard Gabriel Roche", "grew up at Praia de Dias".
        Pattern(
            "introduced street",
            rf"{_ADDRESS_CUE}(?:{cued_prefix_words})[ \t]+"
            rf"(?:{_LINK}[ \t]+){{0,2}}{_CAP}(?:[ \t]+(?:{_LINK}[ \t]+){{0,2}}{_CAP})*(?:{_TAIL})(?![\p{{L}}\d])",
            0.9,  # over spaCy's 0.85 for the same words read as a person ("Vereda Campos")
        ),
        # The lowest score: Presidio drops a result inside a higher-scored one before ``analyze`` below
        # checks this pattern's, so it must never be the one that hides another ("is at PO Box 5").
        Pattern("located", rf"{_LOCATED_CUE}(?:{_INTRODUCED})(?:{_TAIL})(?![\p{{L}}\d])", 0.5),
        Pattern("military", rf"\b(?:{_MILITARY})\b", 0.8),
        Pattern("po box", _PO_BOX, 0.6),
        # Only a text with "corner" in it is searched (`_CORNER_CUE`).
        GuardedPattern("corner", rf"{_CORNER_CUE}(?:the[ \t]+)?{corner_part}[ \t]+and[ \t]+{corner_part}", 0.9,
                       flags=regex.MULTILINE, could_match=has_any_word(("corner",))),
        # Two streets and one house number, a corner without the word: "return to Leon and Eyrarodda 66",
        # "address to the same: Maarit and Hersnapvej 75". The second opens with a name, not a number, and the
        # number counts no "times" or "weeks".
        Pattern(
            "two streets",
            rf"(?<=\b(?i:to|at|on|of)[ \t]+|:[ \t]+){_CAP}[ \t]+and[ \t]+(?=\p{{Lu}})"
            rf"(?:{street_core}|{_CAP}[ \t]+{_NUMBER})(?![\p{{L}}\d])(?![ \t]+{_COUNTED})",
            0.9,
        ),
        # A house number before its street word: "enter on Hoge Wei 32 St.".
        Pattern(
            "number before the street word",
            rf"(?<![\p{{L}}\d]){name}[ \t]+{_NUMBER}[ \t]+(?:{_SHORT_SUFFIXES})\b\.?",
            0.9,
        ),
        Pattern("unit", rf"\b{_UNIT}\b", 0.5),
    ]
    lone_city = regex.compile(rf"(?<=\d\.?|\p{{L}})[ \t]*,[ \t]*(?:{_CITY})$")
    # A full stop after a number or a word of five lower-case letters or more, then a capital: the sentence
    # ends there, not the address ("lives at 12 Oak Street. Mary is great", "Lindenstraße 221. Tähtinen"). An
    # abbreviation's is no end ("123 Main St. Apt 4B", "Jl. Moch. Ramdan No. 50", "Avenida Prof. António"),
    # nor a Hungarian house number's before a unit or a street word ("Rákóczi út 13. Suite 104", "útja 62. St.").
    units = _alternatives(_HAND_UNITS, words.units)
    sentence_end = regex.compile(rf"(?<=\d|\p{{Ll}}{{5}})\.(?=[ \t]+(?!(?:{units}|{_SHORT_SUFFIXES})\b)\p{{Lu}})")
    prefixes = regex.compile(rf"(?i:{_alternatives(_PREFIX_WORDS + '|' + _MORE_PREFIX_WORDS, words.before)})")

    # A unit or a city alone on a line of the block, and its last line: a country or a city, then a
    # postal code ("\n\n Denmark 35018", ">New Zealand 15896").
    block_line = regex.compile(rf"{_NEXT_BLOCK_LINE}(?:{_UNIT}|{_CITY})[ \t]*(?=\n|$)")
    last_line = regex.compile(rf"{_NEXT_BLOCK_LINE}(?:{_CITY})[ \t]+(\d{{4,6}}|\d{{3}}[ \t]\d{{2}})[ \t]*$")

    class _Recognizer(PatternRecognizer):  # type: ignore[misc]
        def analyze(
            self,
            text: str,
            entities: list[str],
            nlp_artifacts: NlpArtifacts | None = None,
            regex_flags: int | None = None,
        ) -> list[RecognizerResult]:
            """A street followed on its line by just ", City" ends before the city, a place of its own (when spaCy
            reads it as one); a
            street word before lower-case words and no number is a common noun ("Plaza access", "via the
            coast")."""
            results = [
                result
                for result in super().analyze(text, entities, nlp_artifacts, regex_flags)
                if (
                    any(char.isdigit() for char in text[result.start : result.end])
                    or _named_without_a_number(text[result.start : result.end])
                )
                and not _number_and_an_english_word(text[result.start : result.end])
                and not _a_count_of_things(text[result.start : result.end])
                and not _a_grammar_word_before_a_number(text[result.start : result.end], prefixes)
            ]
            kept = []
            for result in results:
                length = _introduced_end(
                    text[result.start : result.end], _pattern_name(result), text[result.end : result.end + 30]
                )
                if length is not None:
                    result.end = result.start + length
                    kept.append(result)
            results = kept
            for result in results:
                end = sentence_end.search(text, result.start, result.end)
                if end is not None:
                    result.end = end.start()
            # The city is a place of its own. spaCy's places: one it reads is left to it; one it does not is
            # reported here as a place ("14 Quay Street, Galway H91 X2Y3": spaCy reads "Galway H91" as a person,
            # which is dropped for its digits, so "Galway" was stored raw).
            places = [
                (span.start_char, span.end_char) for span in (nlp_artifacts.entities if nlp_artifacts else ())
                if span.label_ in ("LOCATION", "GPE", "LOC", "FAC")  # Presidio's name for the last three
            ]
            cities = []
            for result in results:
                value = text[result.start : result.end]
                if "\n" not in value:
                    city = lone_city.search(value)
                    if city and regex.fullmatch(rf"(?:{street_core})", value[: city.start()]):
                        start, end = result.start + city.start(), result.end
                        result.end = start
                        if not any(place_start < end and start < place_end for place_start, place_end in places):
                            tail = value[city.start() :]
                            cities.append(RecognizerResult(
                                LOCATION, start + len(tail) - len(tail.lstrip(" \t,")), end, result.score,
                                recognition_metadata=result.recognition_metadata,
                            ))
            return results + cities + self._postcodes_after(text, results)

        @staticmethod
        def _postcodes_after(text: str, streets: list[RecognizerResult]) -> list[RecognizerResult]:
            """The postal code on the last line of an address block the street opens, after the country or
            the city, which are left to spaCy as places: "4844 Søndergade 52\\n Apt. 656\\n Brønderslev\\n\\n
            Denmark 35018". It is part of the address and is masked as one."""
            from presidio_analyzer import RecognizerResult

            found = []
            for street in streets:
                position = street.end
                for _ in range(4):
                    last = last_line.match(text, position)
                    if last is not None:
                        found.append(RecognizerResult(
                            STREET_ADDRESS, last.start(1), last.end(1), street.score,
                            recognition_metadata=street.recognition_metadata,
                        ))
                        break
                    line = block_line.match(text, position)
                    if line is None:
                        break
                    position = line.end()
            return found

    return _Recognizer(
        supported_entity=STREET_ADDRESS,
        name="StreetAddressRecognizer",
        patterns=patterns,
        global_regex_flags=regex.MULTILINE,
    )
