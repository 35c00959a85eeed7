"""Identity numbers, passports and driving licences, validated with python-stdnum rather than shapes alone.

A candidate is one to four whitespace-separated groups of letters and digits (with ``.``, ``-`` or
``/`` inside), holding at least six digits. It is a NATIONAL_ID when one of the schemes below
validates it (python-stdnum's ``is_valid``: length, structure, check digits, embedded birth dates):

- on its own, schemes whose numbers cannot pass for another number: letters with a check character
  (Italy's codice fiscale, Ireland's PPS, Spain's DNI and NIE, Finland's henkilötunnus) or a
  separator of their own (Sweden's personnummer ``YYMMDD-NNNN``, Switzerland's AHV ``756.NNNN.NNNN.NN``,
  Korea's RRN ``YYMMDD-NNNNNNN``);
- after a word that names an identity number within 40 characters ("national ID", "PESEL", "tax id",
  "identity code"), the all-digit schemes: one check digit passes about one random number in ten, so
  alone such a number is as likely an account or order number (France's NIR, Poland's PESEL, the
  Netherlands' BSN, Brazil's CPF, Norway's fødselsnummer, Estonia's isikukood, Turkey's T.C. Kimlik,
  Canada's SIN, Romania's CNP, Croatia's OIB, China's RIC, Denmark's CPR, the UK's NHS number, India's
  Aadhaar, and the numbers that hold a birth date or a structure of their own besides a check digit:
  South Africa's, Germany's IdNr, Belgium's, Bulgaria's EGN, the Czech and Slovak RČ, Lithuania's,
  Slovenia's EMŠO, Iceland's kennitala, Greece's AMKA, Japan's My Number, Thailand's, Malaysia's NRIC,
  Pakistan's CNIC, Indonesia's NIK, Austria's SVNR, Russia's INN, Ukraine's RNOKPP, the Dominican and
  Ecuadorian cédulas, Cuba's NI); and the UK's National Insurance number, which has no check digit, by its
  shape after its name;
- after its own name only ("teudat zehut", "TFN", "IRD", "RUT", "ITIN", "CUIT"), the short schemes whose
  one check digit a random order or ticket number of eight or nine digits passes as often as not once
  all of them are tried: Israel's, Australia's TFN, New Zealand's IRD, Chile's RUT, the US ITIN and
  Argentina's CUIT. Mexico's CURP (letters, a birth date and a check digit) is found alone.

Passport numbers have no check digit that their holders write, so a PASSPORT is a group of six to ten
capitals and digits (at least six digits) after the word "passport".
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from types import ModuleType

from agentmem.domain.pii import PiiSpan

NATIONAL_ID = "NATIONAL_ID"
PASSPORT = "PASSPORT"

_ALONE = ("it.codicefiscale", "ie.pps", "es.dni", "es.nie", "fi.hetu", "mx.curp")
_WITH_SEPARATOR = {
    "se.personnummer": re.compile(r"\d{6}[-+]\d{4}|\d{8}-\d{4}"),
    "ch.ssn": re.compile(r"756\.\d{4}\.\d{4}\.\d{2}"),
    "kr.rrn": re.compile(r"\d{6}-\d{7}"),
}
_WITH_CUE = (
    "fr.nir", "pl.pesel", "nl.bsn", "br.cpf", "no.fodselsnummer", "ee.ik", "tr.tckimlik", "ca.sin", "ro.cnp",
    "hr.oib", "cn.ric", "dk.cpr", "gb.nhs", "se.personnummer", "ch.ssn", "kr.rrn", "in_.aadhaar",
    "za.idnr", "de.idnr", "be.nn", "bg.egn", "lt.asmens", "si.emso", "is_.kennitala", "gr.amka",
    "my.nric", "id.nik", "cu.ni",
)  # fmt: skip
_WITH_OWN_NAME = (
    "il.idnr", "au.tfn", "nz.ird", "cl.rut", "us.itin", "ar.cuit", "pk.cnic", "cz.rc", "sk.rc", "ru.inn", "jp.in_",
    "ua.rntrc", "th.pin", "do.cedula", "ec.ci", "at.vnr",
)  # fmt: skip
_CUE_WINDOW = 40
_ID_CUE = re.compile(
    r"\b(?:id|ids|identity|identification|national|personal|citizen|tax|tin|ssn|social security|insurance"
    r"|pps|ppsn|bsn|pesel|cpf|personnummer|f[øo]dselsnummer|hetu|henkil[öo]tunnus|isikukood|nir|insee"
    r"|codice fiscale|fiscal|dni|nie|nif|cnp|oib|sin|ahv|avs|kimlik|rrn|resident registration|cpr|nhs"
    r"|aadhaa?r|uid|steuer-?id|steuernummer|idnr|identifikationsnummer|rijksregisternummer|egn"
    r"|asmens kodas|em[šs]o|kennitala|amka|nric|mykad|carn[eé]t de identidad)\b",
    re.IGNORECASE,
)
# A bare "id" after a word that names a thing, not a person ("order id", "ticket ID"), names no identity number.
_THING_BEFORE_ID = re.compile(
    r"\b(?:order|ticket|customer|tracking|transaction|case|member|booking|invoice|session|request|user|account"
    r"|product|item|job|run|build|message|device|client|app|api|reference|shipment|package|parcel|trace"
    r"|correlation|event|batch|task|issue|bug|claim|policy|loyalty|reservation|confirmation|employee|student"
    r"|staff|record|file|document|payment|refund|subscription|store|branch|vendor|supplier|project|meeting"
    r"|chat|thread|group|channel|game|player|team)[ \t]*$",
    re.IGNORECASE,
)
# The names of the short schemes of `_WITH_OWN_NAME`, which the words above do not open.
_OWN_NAME_CUE = re.compile(
    r"\b(?:teudat zehut|mispar zehut|tfn|tax file number|ird|rut|itin|cuit|cuil|cnic|rodn[ée] [čc][íi]slo|r[čc]|inn"
    r"|my ?number card|individual number|kojin bang[oō]|rnokpp|ipn|thai (?:national )?id|c[ée]dula"
    r"|(?:sozial)?versicherungsnummer|svnr|vsnr)\b",
    re.IGNORECASE,
)
_PASSPORT_CUE = re.compile(
    r"\bpassports?\b(?:[ \t]+(?:no\.?|number|nr\.?|#))?(?:[ \t]+(?:is|was))?[ \t]*[:#]?[ \t]*$", re.IGNORECASE
)
_PASSPORT = re.compile(r"(?=(?:[A-Z]*\d){6})[A-Z0-9]{6,10}")
# One group: letters and digits, with ".", "-" or "/" between them; trailing punctuation is not part of it.
_GROUP = re.compile(r"(?<![\w.\-/])[A-Za-z0-9]+(?:[.\-/+][A-Za-z0-9]+)*(?![\w])")
_MAX_GROUPS = 4
# The score of a number the words before it name as an identity number (one found alone scores less).
NAMED_ID_SCORE = 0.9


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"stdnum.{name}")


def _valid(name: str, candidate: str) -> bool:
    try:
        return bool(_module(name).is_valid(candidate))
    except Exception:  # a validator that fails on odd input (cn.ric's KeyError) has not validated it
        return False


def _scheme_for(candidate: str, has_cue: bool, has_own_name: bool) -> str | None:
    """The first scheme that validates ``candidate`` under the rules above, if any."""
    # Alone, only a reading with letters: codice fiscale's validator also takes eleven digits (a
    # temporary code), which a London phone number passes.
    if any(char.isalpha() for char in candidate):
        for name in _ALONE:
            if _valid(name, candidate):
                return name
    for name, written in _WITH_SEPARATOR.items():
        if written.fullmatch(candidate) and _valid(name, candidate):
            return name
    if has_cue or has_own_name:
        for name in _WITH_CUE:
            if _valid(name, candidate):
                return name
    if has_own_name:
        for name in _WITH_OWN_NAME:
            if _valid(name, candidate):
                return name
    return None


def _names_an_identity(text: str, cue: re.Match[str]) -> bool:
    if cue.group().lower() not in ("id", "ids"):
        return True
    return _THING_BEFORE_ID.search(text, max(0, cue.start() - 20), cue.start()) is None


def national_id_spans(text: str) -> Iterator[PiiSpan]:
    """NATIONAL_ID spans of ``text``, longest reading first, not overlapping one another."""
    # Every reading holds six digits of `_GROUP`'s (ASCII): most texts have fewer, and are not read at all.
    if sum(map(text.count, "0123456789")) < 6:
        return
    groups = [match for match in _GROUP.finditer(text) if any(char.isdigit() for char in match.group())]
    taken_until = -1
    for index, first in enumerate(groups):
        if first.start() < taken_until:
            continue
        # Groups one space apart are read together ("271 947 699"), the longest reading first.
        run = [first]
        for following in groups[index + 1 : index + _MAX_GROUPS]:
            if text[run[-1].end() : following.start()] != " ":
                break
            run.append(following)
        if sum(char.isdigit() for char in text[first.start() : run[-1].end()]) < 6:
            continue  # no reading of it holds six digits (most numbers: "2 eggs", "at 5:30")
        # The cue names this number, not one before it: "SSN 853-37-1694, card 3782 822463 10005".
        window_start = max(0, first.start() - _CUE_WINDOW, groups[index - 1].end() if index else 0)
        has_cue = any(_names_an_identity(text, cue) for cue in _ID_CUE.finditer(text, window_start, first.start()))
        has_own_name = _OWN_NAME_CUE.search(text, window_start, first.start()) is not None
        for size in range(len(run), 0, -1):
            start, end = run[0].start(), run[size - 1].end()
            candidate = text[start:end]
            if sum(char.isdigit() for char in candidate) < 6:
                continue
            if _scheme_for(candidate, has_cue, has_own_name) is not None:
                taken_until = end
                named = has_cue or has_own_name
                yield PiiSpan(NATIONAL_ID, start, end, candidate, NAMED_ID_SCORE if named else 0.8)
                break


# The UK's National Insurance number has no check digit: its shape (Presidio's ``UkNinoRecognizer``, the
# prefixes HMRC never issues left out) after the words that name it, within ``_CUE_WINDOW`` characters.
_NINO_CUE = re.compile(r"\b(?:national insurance|ni[ \t]+(?:number|no\b\.?|#)|nino)\b", re.IGNORECASE)


def nino_spans(text: str) -> Iterator[PiiSpan]:
    """NATIONAL_ID spans of UK National Insurance numbers ("QQ 12 34 56 C") named as such just before."""
    from presidio_analyzer.predefined_recognizers import UkNinoRecognizer

    for pattern in UkNinoRecognizer.PATTERNS:
        for match in re.finditer(pattern.regex, text):
            if _NINO_CUE.search(text, max(0, match.start() - _CUE_WINDOW), match.start()):
                yield PiiSpan(NATIONAL_ID, match.start(), match.end(), match.group(), NAMED_ID_SCORE)


def passport_spans(text: str) -> Iterator[PiiSpan]:
    """PASSPORT spans: a number of six to ten capitals and digits straight after the word "passport"."""
    for match in _GROUP.finditer(text):
        if _PASSPORT.fullmatch(match.group()) and _PASSPORT_CUE.search(text, max(0, match.start() - 30), match.start()):
            yield PiiSpan(PASSPORT, match.start(), match.end(), match.group(), 0.85)


US_DRIVER_LICENSE = "US_DRIVER_LICENSE"  # Presidio's name for any driving licence (Comprehend's DRIVER_ID)
# "driver's license number is", "driving licence no.", "DL #": the number has no check a holder writes.
_LICENCE_JOIN = r"(?:[ \t]+(?:no\.?|number|nr\.?|#))?(?:[ \t]+(?:is|was))?[ \t]*[:#]?[ \t]*$"
_LICENCE_NAME = re.compile(r"\b(?:driver'?s?|driving)[ \t]+licen[cs]e" + _LICENCE_JOIN, re.IGNORECASE)
_LICENCE_INITIALS = re.compile(r"\bDL" + _LICENCE_JOIN)  # capitals only: "dl" is a download
_LICENCE = re.compile(r"(?=(?:[A-Z-]*\d){4})[A-Z0-9][A-Z0-9-]{4,19}")


def driving_licence_spans(text: str) -> Iterator[PiiSpan]:
    """US_DRIVER_LICENSE spans: five to twenty capitals, digits and dashes (at least four digits) straight
    after "driver's licence (number)" or "DL"."""
    if "DL" not in text and "licen" not in text.lower():
        return
    for match in _GROUP.finditer(text):
        if not _LICENCE.fullmatch(match.group()):
            continue
        before = text[max(0, match.start() - 40) : match.start()]
        if _LICENCE_NAME.search(before) or _LICENCE_INITIALS.search(before):
            yield PiiSpan(US_DRIVER_LICENSE, match.start(), match.end(), match.group(), 0.85)
