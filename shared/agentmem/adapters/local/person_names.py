"""A Presidio recognizer for the people's names spaCy's English model misses or calls places.

spaCy's ``en_core_web_md`` was trained on English news (OntoNotes): it misses names it has not seen
("Timotea lives on ...", "Vsevolod is very reliable"), reads uncommon ones as places ("I want to add
Tünde Hoffmann as a beneficiary" -> GPE), and rarely finds a name written in lower case. This
recognizer runs after the NLP engine in the same Presidio ``AnalyzerEngine`` and adds PERSON results
from three kinds of evidence:

- cues, score 0.9: a title before capitalised words ("Dr. Cettina Fanucci", "Mrs. Schwarz"), a phrase
  that introduces a name ("my name is", "her maiden name is", "Name:", "call me", "says"), a person's
  verb after capitalised words ("Timotea lives on", "Valida spent a year");
- the gazetteer (``name_gazetteer``, Faker's given names and surnames of about 80 locales), score 0.6:
  a run of capitalised words that starts with a given name; a lower-case given name followed by a
  lower-case surname ("patricia desrosiers") or a word no dictionary holds ("leon filipowicz"); a
  list of three or more lower-case given names;
- spaCy's own place, organisation or product entity whose words are a given name and names, reported
  as PERSON with score 0.9 so that it wins over spaCy's 0.85 for the same span;
- the form of the phrase, for names no locale of the gazetteer holds, score 0.9: two such words around an
  initial ("Ravil G Yefimov"), who made or played in a work ("directed by", "starring", "song by
  ex-Zombie Sedej"), a firm's founders, a word joined by "and" to a person found ("Usamov and Bowers"),
  and a full name's surname or the whole name again elsewhere in the text ("... early Yefremova").

A gazetteer candidate that overlaps an entity spaCy labelled an event, a law, a language or an amount
is left to spaCy, and so is one word after a preposition of place ("flew to Coles") and one word that
is also an English verb, adjective or adverb by WordNet (``english_words``: "Love the colours!",
"Glad to hear"; a lower-case pair or list has none of those either: "long way", "true story"). A
place spaCy found whose first word WordNet knows ("London", "Chad") stays a place. Stop words that
start a run ("The", "Maybe") are trimmed off it and end it inside, and a possessive "'s" is not part
of the name.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Container, Iterator
from typing import TYPE_CHECKING

from agentmem.adapters.local import organization_names
from agentmem.adapters.local.english_words import ADJECTIVE, ADVERB, NOUN, VERB, a_verb_form, wordnet_words
from agentmem.adapters.local.korean_names import korean_names
from agentmem.adapters.local.name_gazetteer import NameGazetteer, fold, ordinary_words, shared_gazetteer
from agentmem.adapters.local.word_case import usually_lower_case, written_in_lower_case

if TYPE_CHECKING:
    from presidio_analyzer import EntityRecognizer, RecognizerResult
    from presidio_analyzer.nlp_engine import NlpArtifacts

PERSON = "PERSON"
CUE_SCORE = 0.9
GAZETTEER_SCORE = 0.6
UNKNOWN_PAIR_SCORE = 0.55
RELABEL_SCORE = 0.9
# spaCy labels (after Presidio's mapping) whose span may be a person's name spaCy did not know.
_RELABELLED = frozenset({"LOCATION", "ORGANIZATION", "PRODUCT", "FAC", "WORK_OF_ART"})
# spaCy labels (after Presidio's mapping) that are never a name: a gazetteer word inside one is left alone.
_NOT_NAMES = frozenset(
    {"EVENT", "LAW", "LANGUAGE", "MONEY", "PERCENT", "QUANTITY"}
)

# A word: letters, inner apostrophes or hyphens ("O'Neil", "Hauta-aho"); an initial keeps its period.
# Combining marks count as letters: "Adébáyọ̀" ends in U+0300, which no precomposed character holds.
_LETTER = r"(?:[^\W\d_]|[\u0300-\u036f\u1dc0-\u1dff])"
_WORD = re.compile(rf"{_LETTER}+(?:['’\-]{_LETTER}+)*(?:(?<=\b[^\W\d_])\.)?")
# Three or more words in a list: "silvana, adam, chad and caleb".
_LIST = re.compile(r"\b[^\W\d_]+(?:,[ \t]+[^\W\d_]+)+,?[ \t]+and[ \t]+[^\W\d_]+\b")
# A preposition of place just before a word: "arrived at", "flew to", "in", "from".
_PLACE_BEFORE = re.compile(r"\b(?:in|at|to|from|near|via|towards?)[ \t]+$", re.IGNORECASE)
# ... unless a verb of speaking, or one and its subject, comes before it: "said Maslin to Antonio",
# "shouted at Tiffany", "talked to Vsevolod": the word spoken to is someone.
_SPOKEN_TO = re.compile(
    r"\b(?i:said|says|say|shout(?:s|ed)?|yell(?:s|ed)?|scream(?:s|ed)?|whisper(?:s|ed)?|spoke|speak(?:s|ing)?"
    r"|talk(?:s|ed|ing)?|wrote|write|writes|repl(?:y|ies|ied)|explain(?:s|ed)|wave[sd]?|smile[sd]?|nod(?:s|ded)"
    r"|laugh(?:s|ed)|stare[sd]?|look(?:s|ed)|turn(?:s|ed)|point(?:s|ed)|complain(?:s|ed)|apologi[sz]e[sd]?)"
    r"(?:[ \t]+[^\W\d_][\w'’\-]*){0,2}[ \t]+(?i:to|at)[ \t]+$"
)
# A work after "the" and the word that names its author, or the author's possessive: "the Sokolov novel",
# "the Ronner song", "Mccullough's song".
_WORKS = (
    r"novels?|books?|songs?|films?|movies?|albums?|versions?|recordings?|paintings?|plays?|operas?|poems?"
    r"|symphon(?:y|ies)|biograph(?:y|ies)|memoirs?|stor(?:y|ies)|essays?|cover|remix|translation|adaptation"
)
_AUTHOR_OF_A_WORK = re.compile(
    rf"\b(?i:the)[ \t]+({_LETTER}+(?:['’\-]{_LETTER}+)*)(?=[ \t]+(?:{_WORKS})\b)"
    rf"|\b({_LETTER}+(?:-{_LETTER}+)*)(?=['’]s[ \t]+(?:{_WORKS})\b)"  # "Mccullough's song"
)
# A full name before a work or a performance of theirs: "Have you been to a Izak Janković concert before?".
_FULL_NAME_BEFORE_A_WORK = re.compile(
    rf"\b(?i:a|an|the)[ \t]+({_LETTER}+(?:['’\-]{_LETTER}+)*(?:[ \t]+{_LETTER}+(?:['’\-]{_LETTER}+)*){{1,2}})"
    rf"(?=[ \t]+(?:{_WORKS}|concerts?|gigs?|tours?|recitals?|exhibitions?|retrospectives?|lectures?)\b)"
)
# A name called at the start of a sentence, before a question or a request: "Kuba, can I please speak to
# your boss?", "Ilse, would you ...".
_CALLED_BY_NAME = re.compile(
    rf"(?:^|(?<=[.!?\n] )|(?<=[.!?\n]))({_LETTER}+(?:['’\-]{_LETTER}+)*),[ \t]+"
    r"(?=(?i:can|could|would|will|shall|please|do|did|are|have|thanks|thank|you|your|let's|let|i'm|we're|how"
    r"|what|where|when|why|is)\b)"
)
# A line that is only two to four words (an initial among them), then, one line further at most, a line
# that opens with a house number and a word, a unit or a box: the name on top of a postal address
# ("Duqyaha Karataev\n\n3657 Laukaantie 80", "emidio p lombardo\ngarcia-smith\nunit 1009 box 0219").
_QUOTE = r"(?:>|\?{3}|\|)?[ \t]*"
_ATOP_AN_ADDRESS = re.compile(
    rf"^{_QUOTE}((?:{_LETTER}+(?:['’\-]{_LETTER}+)*\.?[ \t]+){{1,3}}{_LETTER}+(?:['’\-]{_LETTER}+)*)[ \t]*\n"
    # the rest looked at, not taken: the next line may hold a name of its own (">Firm\n>Ane Vojković\n>3654 ...")
    rf"(?=(?:[ \t]*\n)?(?:{_QUOTE}[^\d\n]{{2,60}}\n)?{_QUOTE}"
    # a building's number may come before the house's: "3369 24 Clarke Avenue"
    r"(?:\d{1,6}(?:[ \t]+\d{1,5})?[ \t]+[^\W\d_]"
    r"|(?i:unit|apt\.?|apartment|suite|flat|p\.?[ \t]?o\.?[ \t]+box|psc|us(?:s|ns|cgc))[ \t]+\w))",
    re.MULTILINE,
)
# A word that takes a person as its object, or the text's start, then one lower-case word: "gender of frederikke",
# "me nina,", "crespo is from".
_LOWER_NAME_AFTER = re.compile(
    rf"\b(?:of|me|with|to|for|from|by|ask|tell|call|told|asked|and)[ \t]+({_LETTER}+)(?=[ \t]*(?:[,.;:!?](?!\w)|$|[ \t]"
    r"(?:has|had|is|was|says|said|and|will|would)\b))"
    # opening the text, only before a verb ("crespo is from"; not the "meta" of an identifier "meta.tags[*]")
    rf"|^({_LETTER}+)(?=[ \t]+(?:has|had|is|was|says|said|will|would)\b)",
)
_POSSESSIVE = re.compile(r"['’]s$")
# Lower-case words inside a name: "Willemine ten Pas", "Ludwig van Beethoven", "Maria da Silva".
_PARTICLES = frozenset(
    {"van", "von", "de", "da", "das", "del", "della", "der", "den", "di", "do", "dos", "du", "la", "le",
     "ten", "ter", "bin", "ibn", "al", "el", "y", "zu"}
)  # fmt: skip
_TITLES = r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Madam|Mme|Mlle|Herr|Frau|Sr|Sra|Srta|Rev|Fr)"
# Cues after which capitalised words are a name.
_TITLE_CUE = re.compile(rf"\b(?:{_TITLES}\.?|(?i:mr|mrs|ms|dr|prof)\.)[ \t]+(?=[^\W\d_])")  # "ms. Döring" too
# After a verb of speaking and "to" / "at", a greeting, or before a possessive and a relative, capitalised
# words are someone: "shouted at Odobašić", "said Barbu to Biagiotti", "Hi Leconte,", "Costanzi's kid".
_SPOKEN_TO_CUE = re.compile(
    r"\b(?:said|says|shout(?:s|ed)?|yell(?:s|ed)?|scream(?:s|ed)?|whisper(?:s|ed)?|spoke|talk(?:s|ed)?|wrote)"
    r"(?:[ \t]+[^\W\d_][\w'’\-]*){0,2}[ \t]+(?:to|at)[ \t]+(?=[^\W\d_])"
)
# A greeting before one word and a comma or a stop: "Hi Leconte,", "Thanks Rose!".
_HAILED_CUE = re.compile(r"(?:^|(?<=[\s\"'(]))(?:Hi|Hello|Hey|Dear|Thanks|Bye)[ \t]+(?=[^\W\d_][^\s,!.]*[,!.:])")
_SAYS_CUE = re.compile(r"\b(?:says|said|asked|told|replied|wrote|thanked)[ \t]+(?=[^\W\d_])")
# A greeting or thanks before a capitalised word: "Hello Siobhán, how are you", "Thanks Amaechi!".
_GREETING_CUE = re.compile(
    r"\b(?i:hi|hello|hey|dear|thanks|thank[ \t]+you|cheers|bye|goodbye|good[ \t]+(?:morning|night|evening)"
    r"|welcome|congrats|congratulations|sorry),?[ \t]+(?=[^\W\d_])"
)
# Verbs after which the capitalised words before them are a person: "Timotea lives on ...".
_DOES_CUE = re.compile(
    r"[ \t]+(?:lives|lived|works|worked|spent|shouted|says|said|replied|wrote|was[ \t]+born|is[ \t]+from)\b"
)
# Cues after which the next word is a name whatever its case ("her maiden name is nyberg", "my cousin ciarán").
_RELATIVES = (
    r"friend|cousin|sister|brother|wife|husband|partner|fianc[ée]e?|girlfriend|boyfriend|colleague|coworker"
    r"|co-worker|boss|manager|neighbou?r|landlord|landlady|tenant|mum|mom|mother|dad|father|son|daughter"
    r"|aunt|uncle|niece|nephew|grandma|grandpa|grandmother|grandfather|stepmother|stepfather|flatmate"
    r"|roommate|housemate|classmate|teacher|doctor|dentist|lawyer|nanny|babysitter|mentor|client|patient"
    r"|kid|child|baby|grandson|granddaughter|stepson|stepdaughter"
)
# A speaker's name opening a line of a dialogue: "Gonçalves: Remember me?", "Machová:\"I'm ...\"".
_SPEAKER = re.compile(
    rf"^[ \t]*({_LETTER}+(?:['’\-]{_LETTER}+)*(?:[ \t]+{_LETTER}+(?:['’\-]{_LETTER}+)*)?)[ \t]*:", re.MULTILINE
)
# One word a sentence says is a kind of person, or describes before a personal pronoun takes it up: "Kowalak
# is a very sympathetic person", "Vsevolod is very reliable. You can always depend on him."
_DESCRIBED_AS_A_PERSON = re.compile(
    rf"(?:^|(?<=[.!?\n] )|(?<=[.!?\n]))({_LETTER}+(?:['’\-]{_LETTER}+)*)[ \t]+(?:is|was)[ \t]+"
    r"(?:(?:a|an)[ \t]+(?:(?:very|so|really|quite|truly)[ \t]+)?[a-z\-]+[ \t]+"
    r"(?:person|guy|man|woman|girl|boy|lady|gentleman|listener|friend|colleague|kid|child)\b"
    r"|(?:very|so|really|quite|truly)[ \t]+[a-z\-]+[.!][^\n]{0,60}?\b(?:he|she|him|her|his|himself|herself)\b)"
)
# The one something is given, before what is given: "had given Līce his address", "sent Ottilie her keys".
_GIVEN_TO = re.compile(
    rf"\b(?:gave|given|give|gives|giving|sent|send|sends|showed|shown|show|handed|hand|lent|lend|offered|offer"
    rf"|told|tell|asked|ask)[ \t]+({_LETTER}+(?:['’\-]{_LETTER}+)*)[ \t]+(?:his|her|their|my|your|our)\b"
)
# Who made a work, played in it or left a band: "directed by Brad L Key", "starring Key", "song by ex-Zombie
# Sedej", "\"Tube Snake Boogie\" by Szabina J Gelencsér".
_MADE_BY_CUE = re.compile(
    r"(?:\b(?i:directed|written|produced|composed|performed|sung|painted|edited|illustrated|translated|narrated"
    rf"|photographed|authored|recorded|covered|remixed|film|{_WORKS})|[\"”’])[ \t]+by[ \t]+(?:ex-{_LETTER}+[ \t]+)?"
    rf"|\b(?i:starring|co-starring|featuring|feat\.|ft\.)[ \t]+|\bex-{_LETTER}+[ \t]+(?=[^\W\d_])"
)
# The people a firm's founders are: "our 3 founders: Morrison, Rogers and Torres", "founded by Orr and Lind".
_FOUNDERS = re.compile(
    rf"\b(?i:founders?|co-?founders?|(?:founded|started|co-founded)[ \t]+by)[ \t]*:?[ \t]+"
    rf"(?P<names>{_LETTER}+(?:['’\-]{_LETTER}+)*"
    rf"(?:(?:,[ \t]+|,?[ \t]+(?:and|&)[ \t]+){_LETTER}+(?:['’\-]{_LETTER}+)*)*)"
)
# Two words joined by "and", one of them someone's name: "Usamov and Bowers were precision engineers".
_JOINED_BY_AND = re.compile(
    rf"\b({_LETTER}+(?:['’\-]{_LETTER}+)*)[ \t]+(?:and|&)[ \t]+({_LETTER}+(?:['’\-]{_LETTER}+)*)\b"
)
# A possessive before a relative: "Costanzi's kid", "Blin's daughter".
_RELATIVE_AFTER = re.compile(rf"\b({_LETTER}+(?:-{_LETTER}+)*)['’]s[ \t]+(?:{_RELATIVES})\b")
# One word that introduces a person's name, a relative, a role or a title: "Aunt", "landlord", "Dr.".
ROLE_WORD = re.compile(rf"(?i:{_RELATIVES}|aunty?|auntie|uncle|grandma|granny|nan|{_TITLES})\.?")
_NAME_IS_CUE = re.compile(
    r"\b(?:(?:my|his|her|their|your|maiden|last|first|full|middle|family|given|sur)[ \t]*name[ \t]+(?:is|was)"
    r"|name[ \t]*[:?]|call(?:s|ed)?[ \t]+me|known[ \t]+as|named[ \t]+(?:him|her)"
    rf"|(?P<relative>(?:my|our|his|her|their|your)[ \t]+(?:{_RELATIVES}),?))[ \t]+(?=[^\W\d_])",
    re.IGNORECASE,
)


class _WordsOrFolded:
    """WordNet's words and the same words without diacritics ("cafe" for "café"), as one container.

    The few folded words that differ are a set of their own beside WordNet's shared set, not a copy of
    that set with them added (8 MiB of a server's memory).
    """

    __slots__ = ("folded", "words")

    def __init__(self, words: frozenset[str]) -> None:
        self.words = words
        self.folded = frozenset(folded for folded in map(fold, words) if folded not in words)

    def __contains__(self, word: object) -> bool:
        return word in self.words or word in self.folded


@functools.cache
def _folded_words() -> _WordsOrFolded:
    """WordNet's words and the same words without diacritics."""
    return _WordsOrFolded(wordnet_words(VERB, ADJECTIVE, ADVERB, NOUN))


# A verb whose object is someone, just before a word: "Please ring Bukola Adeyemi-Okafor", "thanked Ngozi Obi".
# Irish surnames' particles: "Ní Bhriain", "Nic Dhonncha", "Ó Súilleabháin", "Uí Néill", "Mac Aodha".
_IRISH_PARTICLES = frozenset({"ní", "nic", "ó", "uí", "ua", "mac"})
_PERSON_OBJECT_VERB = (
    r"\b(?i:ring|rang|call|called|phone|phoned|text|texted|e-?mail|e-?mailed|ask|asked|tell|told|thank|thanked"
    r"|invite|invited|meet|met|contact|contacted|remind|reminded|message|messaged)[ \t]+"
)
_PERSON_OBJECT_BEFORE = re.compile(_PERSON_OBJECT_VERB + "$")
_PERSON_OBJECT_CUE = re.compile(_PERSON_OBJECT_VERB + r"(?=[^\W\d_])")
# Two lower-case words where a person is expected: the object of a verb that takes someone or of "with" / "to",
# or the subject opening a sentence or a question, before a word that ends such a phrase: "Ask bergulv kielland
# whether", "lunch with raakel ratilainen yesterday", "Is radomila pelikan still", "rijk holthuis and I".
# What follows a person who is the object of a verb or of "with": "told priyanka raghunathan the plan", "met ...
# in paris", "hired ... as", "ask ... to review it", "dinner with ... last night", "told ... too". Only after such
# a word: opening a sentence, two unknown words before them are as often a tool's name ("kubectl rollout to the
# cluster").
_AFTER_AN_OBJECT = frozenset(
    {"the", "a", "an", "my", "our", "your", "his", "her", "their", "in", "as", "to", "last", "next", "tonight",
     "later", "when", "too", "also", "twice", "once", "first", "directly", "earlier", "personally", "instead",
     "now", "then"}
)  # fmt: skip
_LOWER_PAIR_FOLLOWS = (
    r"(?=[ \t]*(?:[,.;:!?](?!\w)|$)|[ \t]+(?:about|before|after|whether|yesterday|today|tomorrow|and|is|was|has"
    r"|had|still|if|that|again|soon|back|up|on|at|for|said|says|asked|called|wants|wanted|will|would|can|could"
    r"|reply|replied|agreed|sent|left|came|told|thinks|thought|lives|works|"
    + "|".join(sorted(_AFTER_AN_OBJECT)) + r")\b)"
)
_LOWER_PAIR = re.compile(
    rf"(?:{_PERSON_OBJECT_VERB}|\b(?:with|to|for|from|by|meeting|visiting|visited|hired|hire|congratulate|send|sent|give"
    r"|gave|show|showed|pay|paid)[ \t]+"
    r"|^(?:(?i:is|was|has|did|does|can|will)[ \t]+)?|(?<=[.!?][ \t])(?:(?i:is|was|has|did|does|can|will)[ \t]+)?)"
    # a particle may come between: "mairéad ní fhlannagáin", "seán ó donnchadha", "orla nic dhonncha"
    rf"({_LETTER}+(?:['’\-]{_LETTER}+)*)[ \t]+(?:(?:{'|'.join(sorted(_PARTICLES | _IRISH_PARTICLES))})[ \t]+)?"
    rf"({_LETTER}+(?:['’\-]{_LETTER}+)*){_LOWER_PAIR_FOLLOWS}",
    re.MULTILINE,
)
# What opens a sentence before `_LOWER_PAIR`'s words: nothing, or an auxiliary ("Is ... still").
_OPENING_WORDS = frozenset({"", "is", "was", "has", "did", "does", "can", "will"})
# A verb of going just before "to" / "from" and a word: the word is a place ("moved to rua augusta").
_GONE_BEFORE = re.compile(
    r"\b(?i:mov\w*|went|go|goes|going|gone|flew|fly\w*|dr[io]ve\w*|travel\w*|trip|relocat\w*|head\w*|arriv\w*"
    r"|return\w*|came|come|coming|back|walk\w*|ran|run|ride|rode|way|road|route|train|flight|bus)"
    r"[ \t]+(?:to|from)[ \t]+$"
)


# Of `_PERSON_OBJECT_VERB`'s verbs, those whose object is a person and hardly ever a firm, a product or a
# place: one capitalised word no dictionary holds after them is a given name ("thanked Radomir"), where after
# "call", "text", "ask" or "contact" it is as often a firm or a tool ("Ask Perplexity", "Contact Vodafone").
_MEETS_SOMEONE = frozenset(
    {"met", "meet", "thank", "thanked", "tell", "told", "remind", "reminded"}
)


# What follows a person as such an object, where a firm's name is followed by a noun ("met Vodafone reps"):
# the end of a clause, or a word that opens what comes next ("met Radomir at the station", "told Radomir that").
_AFTER_SOMEONE = re.compile(
    r"[ \t]*(?:[,.;:!?](?!\w)|$)|[ \t]+(?:at|about|to|for|from|in|on|and|or|but|yesterday|today|tomorrow|tonight"
    r"|last|this|that|again|when|before|after|while|if|how|what|why|whether|the|a|an|my|our|your|his|her|their"
    r"|we|I|you|he|she|they|it|so|too|earlier|later|once|twice|soon)\b"
)


def _meets_someone(cue: str) -> bool:
    return cue.split()[0].casefold() in _MEETS_SOMEONE


def _a_plain_unknown_word(word: str, *dictionaries: Container[str]) -> bool:
    """A word no dictionary holds, written as a name is: letters only, capitalised once ("Radomir", not
    "ChatGPT" or "R2D2")."""
    return word.isalpha() and word[1:].islower() and _unknown_word(word, *dictionaries)


def _spoken_to(text: str, start: int) -> bool:
    """True when a verb of speaking (and its subject) and "to" / "at" come just before ``start``."""
    return _SPOKEN_TO.search(text, max(0, start - 60), start) is not None


# An English contraction is no name, whatever a dictionary lists: "I'm", "they're", "we've", "don't".
_CONTRACTION = re.compile(r"\w+['’](?:m|re|ve|ll|d|t)", re.IGNORECASE)


def _unknown_word(word: str, *dictionaries: Container[str]) -> bool:
    """True when neither the word nor its stem without an English inflection ("lives", "called") is listed
    (and the word is no contraction)."""
    if _CONTRACTION.fullmatch(word):
        return False
    key = word.casefold()
    stems = {key, *(key[: -len(end)] for end in ("s", "es", "ed", "d", "ing") if key.endswith(end))}
    if key.endswith("ies"):
        stems.add(key[:-3] + "y")  # "Technologies", "Industries"
    return all(stem not in dictionary for stem in stems for dictionary in dictionaries)


class _Word:
    __slots__ = ("end", "start", "text")

    def __init__(self, start: int, end: int, text: str) -> None:
        possessive = _POSSESSIVE.search(text)
        if possessive and len(text) > 3:
            text = text[: possessive.start()]
            end = start + len(text)
        self.start, self.end, self.text = start, end, text

    @property
    def capitalised(self) -> bool:
        # An all-capitals word longer than an initial is a heading or a city on an envelope, not a name.
        return self.text[0].isupper() and not (len(self.text) > 2 and self.text.isupper())


def _words(text: str) -> list[_Word]:
    return [_Word(match.start(), match.end(), match.group()) for match in _WORD.finditer(text)]


def _capitalised_runs(text: str, words: list[_Word]) -> Iterator[list[_Word]]:
    """Maximal runs of capitalised words one space apart, with name particles between them."""
    index = 0
    while index < len(words):
        if not words[index].capitalised:
            index += 1
            continue
        end = index + 1
        while end < len(words) and text[words[end - 1].end : words[end].start] == " ":
            if words[end].capitalised and words[end].text.casefold() not in ordinary_words():
                end += 1
            elif (
                words[end].text in _PARTICLES
                and end + 1 < len(words)
                and words[end + 1].capitalised
                and text[words[end].end : words[end + 1].start] == " "
            ):
                end += 2
            else:
                break
        yield words[index:end]
        index = end


def _run_after(text: str, words: list[_Word], position: int) -> list[_Word]:
    """The capitalised run starting at ``position``, if a word starts there."""
    for run in _capitalised_runs(text, [word for word in words if word.start >= position]):
        return run if run[0].start == position else []
    return []


class PersonNameFinder:
    """The PERSON spans of a text, given spaCy's entities (see the module docstring)."""

    def __init__(self, gazetteer: NameGazetteer | None = None) -> None:
        self._gazetteer = gazetteer

    @property
    def gazetteer(self) -> NameGazetteer:
        if self._gazetteer is None:
            self._gazetteer = shared_gazetteer()
        return self._gazetteer

    def _opens_with_a_verb(self, text: str, run: list[_Word]) -> bool:
        """True when an English word (or a verb's inflection) that is nobody's given name opens the sentence before
        a given name or a word no dictionary holds: "Ring Tomasz Wierzbicki", "Refunded Ana Silva"; the name is
        the rest. Not "Will Smith" (a given name) nor "American Red Ball Movers" ("Red" is a word)."""
        from agentmem.adapters.local.noun_phrases import opens_a_sentence  # noun_phrases imports this module

        gazetteer = self.gazetteer
        known = wordnet_words(VERB, ADJECTIVE, ADVERB, NOUN)
        return (
            len(run) >= 2
            and not gazetteer.is_first(run[0].text)
            and (run[0].text.casefold() in known or a_verb_form(run[0].text.casefold()))  # "Refunded Ana"
            # a sentence, or what follows a colon: "Wrong: Ring Tomasz tomorrow"
            and (opens_a_sentence(text, run[0].start) or text[: run[0].start].rstrip(" \t").endswith(":"))
            and (
                run[1].text.casefold() not in known
                # after a verb that takes someone, a given name alone that is also a word: "Text Sam", "Call Mark"
                # (not "Ask Royal Bank Scot", "Remind Lemon Grove")
                or (len(run) == 2 and gazetteer.is_first(run[1].text)
                    and _PERSON_OBJECT_CUE.match(text, run[0].start) is not None)
            )
            and (gazetteer.is_first(run[1].text) or _unknown_word(run[1].text, _folded_words(), ordinary_words()))
        )

    def name_start(self, text: str, start: int, end: int) -> int:
        """Where the name of spaCy's person ``text[start:end]`` starts, past a word opening the sentence before
        it ("Ring Tomasz" is "Tomasz")."""
        run = [word for word in _words(text) if start <= word.start and word.end <= end]
        return run[1].start if self._opens_with_a_verb(text, run) else start

    def find(self, text: str, entities: list[tuple[str, int, int]]) -> list[tuple[int, int, float]]:
        """PERSON spans ``(start, end, score)`` of ``text``, given spaCy's ``(label, start, end)``."""
        gazetteer = self.gazetteer
        ordinary = ordinary_words()
        english = wordnet_words(VERB, ADJECTIVE, ADVERB)  # "Glad", "Love", "Long": words before names
        verbs = wordnet_words(VERB, ADVERB)
        known = wordnet_words(VERB, ADJECTIVE, ADVERB, NOUN)  # places too: "London", "Chad"
        every_word = _folded_words()
        words = _words(text)
        blocked = [(start, end) for label, start, end in entities if label in _NOT_NAMES]
        found: list[tuple[int, int, float]] = []

        def add(start: int, end: int, score: float) -> None:
            if start < end and (
                score >= CUE_SCORE or not any(start < b_end and b_start < end for b_start, b_end in blocked)
            ):
                found.append((start, end, score))

        def trimmed(run: list[_Word]) -> list[_Word]:
            while run and not gazetteer.is_name(run[0].text) and run[0].text.casefold() in ordinary:
                run = run[1:]
            return without_an_opening_verb(run)

        def without_an_opening_verb(run: list[_Word]) -> list[_Word]:
            return run[1:] if len(run) >= 3 and self._opens_with_a_verb(text, run) else run

        # A romanised Korean given name beside a Korean surname, by its form: "Seo-yeon Park", "Park Seo-yeon".
        for start, end in korean_names(text):
            add(start, end, CUE_SCORE)
        # Cues.
        for cue in (_TITLE_CUE, _SAYS_CUE):
            for match in cue.finditer(text):
                run = trimmed(_run_after(text, words, match.end()))
                if run and run[0].text.casefold() not in ordinary:
                    add(run[0].start, run[-1].end, CUE_SCORE)
        for match in _PERSON_OBJECT_CUE.finditer(text):
            # Two capitalised words, the object of a verb that takes someone: a given name and a surname, or a word
            # no dictionary holds and a surname or a second such word ("Call Öğünç Durmaz", "Remind Batı
            # Tahincioğlu"). A surname that is also a word or a place is left to the other rules: "Text Dell Sales",
            # "Please call Vodafone Ireland" are firms.
            run = _run_after(text, words, match.end())
            if len(run) == 1 and gazetteer.is_first(run[0].text) and run[0].text.casefold() not in known | ordinary:
                add(run[0].start, run[0].end, CUE_SCORE)  # a given name alone: "Ring Tomasz tomorrow", "Email Priya"
                continue
            if (
                len(run) == 1
                and _meets_someone(match.group())
                and _a_plain_unknown_word(run[0].text, every_word, ordinary)
                and _AFTER_SOMEONE.match(text, run[0].end) is not None
            ):
                add(run[0].start, run[0].end, CUE_SCORE)  # a given name no table holds: "I met Radomir at the station"
                continue
            # Three names, one at most a noun too ("Ana"): "Meet Nguyễn Văn Thành", "Remind Ana Lucía Gómez".
            if len(run) == 3 and all(
                word.text.casefold() not in english
                and (gazetteer.is_name(word.text) or _unknown_word(word.text, every_word, ordinary))
                for word in run
            ) and sum(gazetteer.is_name(word.text) for word in run) >= 2 and sum(
                word.text.casefold() in known for word in run
            ) <= 1:
                add(run[0].start, run[2].end, CUE_SCORE)
                continue
            if len(run) != 2 or run[0].text.casefold() in english:
                continue
            head, tail = run[0].text, run[1].text
            if (gazetteer.is_first(head) and gazetteer.is_last(tail) and tail.casefold() not in known) or (
                _unknown_word(head, every_word, ordinary)
                and (
                    (gazetteer.is_last(tail) and tail.casefold() not in known)
                    or _unknown_word(tail, every_word, ordinary)
                )
            ):
                add(run[0].start, run[1].end, CUE_SCORE)
        for match in _GREETING_CUE.finditer(text):
            # Only a given name or a word no dictionary holds: "Thanks Google", "Hi All", "Cheers Mate" are no one.
            run = trimmed(_run_after(text, words, match.end()))
            if run and run[0].text.casefold() not in known and (
                gazetteer.is_first(run[0].text) or _unknown_word(run[0].text, every_word, ordinary)
            ):
                add(run[0].start, run[-1].end, CUE_SCORE)
        for match in _DOES_CUE.finditer(text):
            before = [word for word in words if word.end <= match.start()]
            if before and before[-1].end == match.start() and before[-1].capitalised:
                runs = list(_capitalised_runs(text, before))
                run = trimmed(runs[-1]) if runs else []
                if run and run[-1].end == match.start():
                    add(run[0].start, run[-1].end, CUE_SCORE)
        for match in _NAME_IS_CUE.finditer(text):
            run = _run_after(text, words, match.end())
            if run and match.group("relative") and run[0].text.casefold() in ordinary:
                continue  # "When I killed your brother, I talked"
            if run:
                add(run[0].start, run[-1].end, CUE_SCORE)
                continue
            following = [word for word in words if word.start >= match.end()][:2]
            # After "my friend" the next word is as often a verb ("my friend said"): it must be no English word.
            relative = match.group("relative") is not None
            if following and _unknown_word(following[0].text, known if relative else ordinary, ordinary):
                end = following[0].end
                if len(following) == 2 and text[following[0].end : following[1].start] == " " and (
                    gazetteer.is_last(following[1].text)
                    or (relative and _unknown_word(following[1].text, known, ordinary))
                ):
                    end = following[1].end
                add(following[0].start, end, CUE_SCORE)
        # Capitalised runs the gazetteer knows.
        for run in _capitalised_runs(text, words):
            run = trimmed(run)
            if not run:
                continue
            if len(run) == 1 and _PLACE_BEFORE.search(text, 0, run[0].start) and not _spoken_to(text, run[0].start):
                continue  # "flew to Coles", "I am in Akureyri": one word after a place's preposition
            if len(run) == 1 and run[0].text.casefold() in english:
                continue  # "Love it!", "Glad to hear": one word that is also an English verb or adjective
            if len(run) == 1 and gazetteer.is_rare(run[0].text) and run[0].text.casefold() in known:
                continue  # "Lemon tiles", "River views": an English noun that is a name in one or two locales
            if gazetteer.is_first(run[0].text):
                add(run[0].start, run[-1].end, GAZETTEER_SCORE)
        # Lower-case given name + surname.
        after_capital = {
            following.start for previous, following in itertools.pairwise(words)
            if previous.capitalised and text[previous.end : following.start] == " "
        }
        for first, second in itertools.pairwise(words):
            if (
                first.text.islower()
                and second.text.islower()
                and text[first.end : second.start] == " "
                and gazetteer.is_first(first.text)
                # a known surname, or a word no dictionary holds ("leon filipowicz", "alvar rehák"; not a
                # stop word, which WordNet does not list: "along the mills for an hour")
                and (
                    gazetteer.is_last(second.text)
                    # not after a capitalised word: "Estonian pak choy" is a dish
                    or (len(second.text) > 2 and _unknown_word(second.text, every_word, ordinary)
                        and first.start not in after_capital)
                )
                and first.text not in english
                and second.text not in english
            ):
                add(first.start, second.end, GAZETTEER_SCORE)
        # Two capitalised words no dictionary knows, one of them a name by the gazetteer or by spaCy:
        # "Inioluwa Olaiya", "Olúwaṣeun Adébáyọ̀" (spaCy finds the first word only). Words spaCy labelled
        # otherwise are left to it (a place, an organisation).
        # spaCy's organisation that is exactly such a pair ("Amaechi Okonkwo" alone, as a label) is a person:
        # an organisation's name holds a word a dictionary knows ("Okonkwo Holdings").
        def a_pair_of_names(start: int, end: int) -> bool:
            pair = without_an_opening_verb([word for word in words if start <= word.start and word.end <= end])
            return len(pair) == 2 and all(_unknown_word(word.text, every_word, ordinary) for word in pair)

        labelled = [
            (start, end) for label, start, end in entities
            if label != PERSON and not (label == "ORGANIZATION" and a_pair_of_names(start, end))
        ]
        people = [(start, end) for label, start, end in entities if label == PERSON]
        for run in _capitalised_runs(text, words):
            run = [word for word in run if word.text.casefold() not in ordinary and fold(word.text) not in every_word]
            for first, second in itertools.pairwise(run):
                if (
                    text[first.end : second.start] == " "
                    and (
                        gazetteer.is_name(first.text)
                        or gazetteer.is_name(second.text)
                        or any(first.start < p_end and p_start < second.end for p_start, p_end in people)
                    )
                    and min(len(first.text), len(second.text)) > 2
                    and not any(first.start < b_end and b_start < second.end for b_start, b_end in labelled)
                ):
                    add(first.start, second.end, UNKNOWN_PAIR_SCORE)
        # The author of a work ("the Sokolov novel"): a word no dictionary holds or a surname mostly written
        # capitalised, as before any noun ("the Johnson novel"; not "the Baker song", a common word).
        for match in _AUTHOR_OF_A_WORK.finditer(text):
            group = 1 if match.group(1) else 2
            word = match.group(group)
            if word[0].isupper() and word.casefold() not in ordinary and (
                _unknown_word(word, every_word, ordinary) or (gazetteer.is_last(word) and not usually_lower_case(word))
            ):
                add(match.start(group), match.end(group), CUE_SCORE)
        # A name called at the start of a sentence before a question or a request ("Kuba, can I ...");
        # not a common word ("Honey, can you", "Mark, do you": mostly written in lower case).
        # Someone spoken to, greeted, or whose relative is named: only names of the gazetteer or words no
        # dictionary holds ("Hello World!", "wrote to Support" are no one).
        for cue in (_SPOKEN_TO_CUE, _HAILED_CUE):
            for match in cue.finditer(text):
                run = trimmed(_run_after(text, words, match.end()))
                if run and all(
                    gazetteer.is_name(word.text) or _unknown_word(word.text, every_word, ordinary) for word in run
                ):
                    add(run[0].start, run[-1].end, CUE_SCORE)
        for match in _GIVEN_TO.finditer(text):
            word = match.group(1)
            if word[:1].isupper() and word.casefold() not in ordinary and (
                (gazetteer.is_name(word) and not usually_lower_case(word)) or _unknown_word(word, every_word, ordinary)
            ):
                add(match.start(1), match.end(1), CUE_SCORE)
        for match in _RELATIVE_AFTER.finditer(text):
            word = match.group(1)
            if (word[0].isupper() and (gazetteer.is_name(word) or _unknown_word(word, every_word, ordinary))) or (
                word.islower() and gazetteer.is_first(word) and word not in english  # "vittoria's daughter"
            ):
                add(match.start(1), match.end(1), CUE_SCORE)
        # The speakers of a dialogue, two lines or more opening with a name and a colon; names of the gazetteer
        # or words no dictionary holds only ("Date:", "Phone:", "User:", "Bot:" are labels).
        # A speaker in lower case is a given name that is no English word ("mika:", "tracy:"; not "note:").
        speakers = [
            match for match in _SPEAKER.finditer(text)
            if all(
                word[:1].isupper()
                and word.casefold() not in ordinary
                and (
                    (gazetteer.is_name(word) and not usually_lower_case(word))
                    or _unknown_word(word, every_word, ordinary)
                )
                for word in match.group(1).split()
            ) or (
                match.group(1).islower()
                and " " not in match.group(1)
                and gazetteer.is_first(match.group(1))
                and match.group(1) not in english
            )
        ]
        if len(speakers) >= 2:
            for match in speakers:
                add(match.start(1), match.end(1), CUE_SCORE)
        for match in _DESCRIBED_AS_A_PERSON.finditer(text):
            word = match.group(1)
            if word[:1].isupper() and word.casefold() not in ordinary and (
                (gazetteer.is_name(word) and not usually_lower_case(word)) or _unknown_word(word, every_word, ordinary)
            ):
                add(match.start(1), match.end(1), CUE_SCORE)
        for match in _CALLED_BY_NAME.finditer(text):
            word = match.group(1)
            if (
                word[0].isupper()
                and (gazetteer.is_name(word) or _unknown_word(word, every_word, ordinary))
                and word.casefold() not in ordinary
                and (word.casefold() not in known or not usually_lower_case(word))
            ):
                add(match.start(1), match.end(1), CUE_SCORE)
        # The name on top of a postal address: its words are names of the gazetteer, initials or words no
        # dictionary holds ("Duqyaha Karataev"; not "Shipping details").
        for match in _ATOP_AN_ADDRESS.finditer(text):
            names = [word.text for word in _words(match.group(1))]
            if not organization_names.a_legal_form(names[-1]) and not organization_names.a_business_word(
                names[-1]
            ) and all(
                len(word.rstrip(".")) == 1 or gazetteer.is_name(word) or _unknown_word(word, every_word, ordinary)
                for word in names
            ) and sum(len(word) > 2 for word in names) >= 2:
                add(match.start(1), match.end(1), CUE_SCORE)
        # One lower-case name that is no English word after a word that takes a person ("the true gender of
        # frederikke", "of eskola has", "leave me nina,"): not a name particle ("del") nor a word of three letters.
        for match in _LOWER_NAME_AFTER.finditer(text):
            group = 1 if match.group(1) else 2
            word = match.group(group)
            if (
                len(word) > 3
                and word not in _PARTICLES
                and gazetteer.is_name(word)
                and _unknown_word(word, every_word, ordinary)
            ):
                add(match.start(group), match.end(group), GAZETTEER_SCORE)
        # Two lower-case words where a person is expected (`_LOWER_PAIR`), each a name written capitalised more
        # often than not or a word no dictionary holds and people do not write in lower case, one of them at least
        # the latter: "Ask bergulv kielland whether", "caner topaloğlu and I" (names no locale of the gazetteer
        # holds). Not after a verb of going ("moved to rua augusta"), nor words a dictionary holds ("lunch with
        # pad thai") or that people write ("deploy with terraform modules", "sync with nginx redis").
        # Capitalised, the same two words only after a word that takes a person, not opening a sentence ("Xiaomi
        # Redmi is great"): "lunch with Veigo Mercklin yesterday", "forward the lease to Hece Abacı before Friday".
        for match in _LOWER_PAIR.finditer(text):
            pair = (match.group(1), match.group(2))
            if len(pair[0]) < 3 or len(pair[1]) < 3 or pair[0] in _PARTICLES or pair[1] in _PARTICLES:
                continue
            lower = all(word.islower() for word in pair)
            capitalised = all(word[0].isupper() and word[1:].islower() for word in pair)
            opening = text[match.start() : match.start(1)].strip().casefold() in _OPENING_WORDS
            if not (lower or (capitalised and not opening)):
                continue
            after = text[match.end() :].split(maxsplit=1)
            if opening and after and after[0] in _AFTER_AN_OBJECT:
                continue
            unknown = [_unknown_word(word, every_word, ordinary) and not written_in_lower_case(word) for word in pair]
            if any(unknown) and all(
                is_unknown
                or (gazetteer.is_name(word) and word.casefold() not in known and not usually_lower_case(word))
                for word, is_unknown in zip(pair, unknown, strict=True)
            ) and not _GONE_BEFORE.search(text, max(0, match.start(1) - 40), match.start(1)):
                add(match.start(1), match.end(2), GAZETTEER_SCORE)
        # A list of three or more lower-case words, all given names, or names and words no dictionary holds, two
        # given names among them and names half of them at least: "silvana, adam, chad and caleb", "leonti,
        # terrence, pamela, donna, andrea and brian", "annegret, nedolf, andreassen, aamot, antonsen and christina".
        for match in _LIST.finditer(text):
            items = [word for word in _words(match.group()) if word.text != "and"]
            given = [word for word in items if gazetteer.is_first(word.text) and word.text not in english]
            named = [word for word in items if gazetteer.is_name(word.text) and word.text not in english]
            if len(items) >= 3 and all(word.text.islower() for word in items) and (
                len(given) == len(items)
                or (len(given) >= 2 and 2 * len(named) >= len(items) and all(
                    word in named or (len(word.text) > 3 and _unknown_word(word.text, every_word, ordinary))
                    for word in items
                ))
            ):
                for word in items:
                    add(match.start() + word.start, match.start() + word.end, GAZETTEER_SCORE)
        def a_name_word(word: _Word) -> bool:
            """A capitalised word of a name: an initial, a name of the gazetteer or a word no dictionary holds."""
            value = word.text
            if len(value.rstrip(".")) == 1:
                return value[0].isupper()
            return (
                word.capitalised
                and value.casefold() not in ordinary
                and (gazetteer.is_name(value) or _unknown_word(value, every_word, ordinary))
                and not organization_names.a_legal_form(value)
                and not organization_names.a_business_word(value)
            )

        # A given name, an initial and a surname: "Ravil G Yefimov", "Faina D. Yefremova" (names no locale of
        # the gazetteer holds; spaCy reads them as organisations or misses them).
        for first, initial, last in zip(words, words[1:], words[2:], strict=False):
            if (
                len(initial.text.rstrip(".")) == 1
                and initial.text[0].isupper()
                and text[first.end : initial.start] == " "
                and text[initial.end : last.start] == " "
                and len(first.text) > 2
                and len(last.text) > 2
                and a_name_word(first)
                and a_name_word(last)
            ):
                add(first.start, last.end, CUE_SCORE)
        # Who made a work or played in it: "directed by Brad L Key", "starring Key", "by ex-Zombie Sedej".
        for match in _MADE_BY_CUE.finditer(text):
            run = _run_after(text, words, match.end())
            if run and len(run) <= 4 and all(a_name_word(word) for word in run) and any(
                len(word.text) > 2 for word in run
            ):
                add(run[0].start, run[-1].end, CUE_SCORE)
        for match in _FULL_NAME_BEFORE_A_WORK.finditer(text):
            run = [word for word in words if match.start(1) <= word.start and word.end <= match.end(1)]
            if len(run) >= 2 and all(a_name_word(word) for word in run):
                add(run[0].start, run[-1].end, CUE_SCORE)
        # A firm's founders are people: "our 3 founders: Morrison, Rogers and Torres".
        for match in _FOUNDERS.finditer(text):
            for word in _words(match.group("names")):
                if word.text not in ("and",) and a_name_word(word) and len(word.text) > 2:
                    add(match.start("names") + word.start, match.start("names") + word.end, CUE_SCORE)
        # spaCy's places, organisations, products that are names (a nationality is an adjective: "French");
        # a place WordNet knows ("London") stays a place.
        for label, start, end in entities:
            parts = [word for word in words if start <= word.start and word.end <= end]
            # "flew to Coles" is a place; "send it to Agnes Adeyemi" is someone.
            if label not in _RELABELLED or (
                len(parts) < 2 and _PLACE_BEFORE.search(text, 0, start) and not _spoken_to(text, start)
            ):
                continue
            opened = without_an_opening_verb(parts)
            if opened is not parts:
                parts, start = opened, opened[0].start
            if not parts:
                continue
            known_given_name = gazetteer.is_first(parts[0].text) and (
                all(gazetteer.is_name(part.text) for part in parts[1:])
                # spaCy's organisation of a given name, names, then a word no dictionary holds: "Siobhán Ní
                # Chuív" (not a place: "at Rúa de la Unión")
                or (label == "ORGANIZATION" and len(parts) >= 3 and not _PLACE_BEFORE.search(text, 0, start)
                    and all(gazetteer.is_name(part.text) for part in parts[1:-1])
                    and _unknown_word(parts[-1].text, every_word, ordinary))
            )
            # a word no dictionary holds and a surname, as the object of a verb that takes someone: "Please ring
            # Bukola Adeyemi-Okafor" (spaCy: a place), whose given name the gazetteer lacks
            someone_addressed = (
                len(parts) == 2
                and _PERSON_OBJECT_BEFORE.search(text, max(0, start - 20), start) is not None
                and _unknown_word(parts[0].text, every_word, ordinary)
                and gazetteer.is_last(parts[1].text)
                and parts[1].text.casefold() not in known  # "Vodafone Ireland" stays where spaCy put it
            )
            if (
                (known_given_name or someone_addressed)
                and not (label == "LOCATION" and parts[0].text.casefold() in known)
                and not (len(parts) == 1 and parts[0].text.casefold() in verbs)
            ):
                found.append((start, end, RELABEL_SCORE))
        found.extend(self._joined_and_repeated(text, words, entities, found, a_name_word))
        return found

    def _joined_and_repeated(
        self,
        text: str,
        words: list[_Word],
        entities: list[tuple[str, int, int]],
        found: list[tuple[int, int, float]],
        a_name_word: Callable[[_Word], bool],
    ) -> list[tuple[int, int, float]]:
        """People named beside or after a person already found: a word no dictionary holds joined to a name by
        "and" ("Usamov and Bowers were"), and a full name's surname or the whole name again elsewhere in the
        text ("the verses from Faina D. Yefremova's Cautionary Tales ... early Yefremova")."""
        from agentmem.adapters.local.noun_phrases import opens_a_sentence  # noun_phrases imports this module

        people = [(start, end) for start, end, _ in found] + [
            (start, end) for label, start, end in entities if label == PERSON
        ]
        if not people:
            return []
        by_start = {word.start: word for word in words}
        more: list[tuple[int, int, float]] = []

        def a_person_at(word: _Word) -> bool:
            return any(start <= word.start and word.end <= end for start, end in people)

        every_word = _folded_words()
        for match in _JOINED_BY_AND.finditer(text) if " and " in text or " & " in text else ():
            left, right = by_start.get(match.start(1)), by_start.get(match.start(2))
            if left is None or right is None:
                continue
            for one, other in ((left, right), (right, left)):
                if (
                    a_person_at(other)
                    and not a_person_at(one)
                    and one.capitalised
                    and len(one.text) > 2
                    and _unknown_word(one.text, every_word, ordinary_words())
                ):
                    more.append((one.start, one.end, CUE_SCORE))
        known = wordnet_words(VERB, ADJECTIVE, ADVERB, NOUN)
        names: set[str] = set()
        for start, end in people:
            parts = [word for word in words if start <= word.start and word.end <= end]
            if len(parts) >= 2 and all(word.capitalised for word in parts):
                names.add(text[parts[0].start : parts[-1].end])
                if a_name_word(parts[-1]) and len(parts[-1].text) > 2:
                    names.add(parts[-1].text)
        for name in names:
            position = text.find(name)
            while position != -1:
                end = position + len(name)
                # a whole word, or words, of the text ("Yefremova's" too, not "Yefremovas")
                whole = by_start.get(position) is not None and (end == len(text) or not text[end].isalnum())
                if (
                    whole
                    and not any(start <= position < stop for start, stop in people)
                    # "Key findings:" opening a sentence is no Mr. Key
                    and not (name.casefold() in known and opens_a_sentence(text, position))
                ):
                    more.append((position, end, CUE_SCORE))
                position = text.find(name, end)
        return more


def build_recognizer(gazetteer: NameGazetteer | None = None) -> EntityRecognizer:
    """A Presidio ``EntityRecognizer`` wrapping :class:`PersonNameFinder`, for an ``AnalyzerEngine``."""
    from presidio_analyzer import EntityRecognizer, RecognizerResult

    finder = PersonNameFinder(gazetteer)

    class _Recognizer(EntityRecognizer):  # type: ignore[misc]
        def load(self) -> None:
            return None

        def analyze(
            self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
        ) -> list[RecognizerResult]:
            if PERSON not in entities:
                return []
            spans = nlp_artifacts.entities if nlp_artifacts else []
            spacy_entities = [(span.label_, span.start_char, span.end_char) for span in spans]
            return [
                RecognizerResult(PERSON, start, end, score) for start, end, score in finder.find(text, spacy_entities)
            ]

    return _Recognizer(supported_entities=[PERSON], name="PersonNameRecognizer", supported_language="en")
