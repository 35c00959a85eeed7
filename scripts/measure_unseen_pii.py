"""How the local PII detector does on formats it was not developed on: seeded sets drawn from Faker and mimesis.

    .venv/bin/python scripts/measure_unseen_pii.py [--per-set 300] [--seed 20] [--dump DIR] [--detector local]

pii-dev.json's values come from a few locales and a few sentence shapes. This draws, with a fixed seed,
six sets of new sentences (templates written for this script, not pii-dev's) and scores the detector
per type with the same span-overlap rules as `agentmem eval pii`:

- names: given names and surnames of 40 locales, a third written in lower case, many with diacritics
  (Faker's yo_NG, vi_VN, ga_IE, ...). Faker's names are also the gazetteer's (``name_gazetteer``), so
  half the names come from mimesis (a dev dependency with its own name lists, which the gazetteer has
  never seen): ``names`` scores both, ``names-mimesis`` those alone;
- addresses: Faker street addresses of 25 locales in sentences; ``addresses-mimesis`` the same
  sentences with mimesis' street addresses of 27 locales (the detector reads its street words from
  Faker's address providers, never from mimesis, so this is the set it has never seen);
- ids: national identity numbers of 16 schemes (Faker's, checked with python-stdnum: only valid ones
  are kept), Irish PPS numbers (made with stdnum's check character), passport numbers after their
  name, Eircodes, UK and Canadian postcodes;
- dob: dates of birth written in 12 ways next to "born", "DOB", "birthday", "date of birth";
- phones: Faker phone numbers of 50 locales in sentences, and beside them numbers that are not phones
  (order and account numbers, long digit runs, timestamps, invoice totals), which must not be found;
- false alarms: random identifiers (``marker-2-0-ec3190``, uuids, hex digests, slugs, version strings)
  and sentences of common words that are also names or nationalities ("Thai curry", "ridge runner"):
  nothing in them is personal data, so every span is a false alarm; prints the share of records with
  one;
- ordinary: generated sentences that hold no personal data but look like they might, in five kinds
  drawn with the seed: capitalised common words that are also names ("Hunter boots are on sale":
  mimesis' English words, colours and foods that the name gazetteer and WordNet's nouns both hold,
  less Faker's en_US given names and less the surnames written capitalised four times as often as in
  lower case, "Thompson", "Jones": "the Thompson bowl" names a family), place-like common nouns
  (Faker's en_US street words that are WordNet nouns: "Route via the coast"), a nationality before a
  thing (mimesis' nationalities and foods: "Thai curry"), product names (mimesis' cars, phones,
  operating systems, manufacturers) and identifiers (as above); prints the share of each kind that had a span masked.

With ``--dump DIR`` each set is written as a Presidio-format JSON file, for ``agentmem eval pii``.
Faker and mimesis are dev dependencies; every value is made up. Asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentmem.eval.pii import evaluate_detector, format_table
from faker import Faker

Record = dict[str, Any]

NAME_LOCALES = (
    "en_US", "en_GB", "en_IE", "ga_IE", "en_NG", "yo_NG", "ig_NG", "ha_NG", "en_KE", "sw", "zu_ZA", "tw_GH",
    "fr_FR", "de_DE", "de_CH", "es_ES", "es_MX", "es_AR", "pt_BR", "pt_PT", "it_IT", "nl_NL", "pl_PL", "cs_CZ",
    "sk_SK", "hu_HU", "ro_RO", "hr_HR", "sl_SI", "tr_TR", "az_AZ", "vi_VN", "id_ID", "sv_SE", "fi_FI", "da_DK",
    "no_NO", "is_IS", "lt_LT", "lv_LV",
)
MIMESIS_LOCALES = ("cs", "da", "de", "en", "es", "et", "fi", "fr", "hr", "hu", "is", "it", "nl", "no", "pl", "pt",
                   "sk", "sv", "tr")  # fmt: skip
NAME_TEMPLATES = (
    "I had lunch with {} yesterday and we talked about the move.",
    "{} is picking the kids up from school on Thursday.",
    "Please forward the signed lease to {} before Friday.",
    "my cousin {} said the ferry was late again",
    "Can you remind {} about the dentist appointment?",
    "The flowers were from {}, I think.",
    "we invited {} and her partner to the wedding",
    "Ask {} whether the boiler was serviced.",
    "Notes from the call with {}: wants a quote by March.",
    "{} and I split the bill.",
    "Is {} still your emergency contact?",
    "the landlord, {}, never answers emails",
)
ADDRESS_LOCALES = (
    "en_US", "en_GB", "en_IE", "en_AU", "en_CA", "en_NZ", "fr_FR", "de_DE", "de_AT", "es_ES", "es_MX", "it_IT",
    "pt_PT", "pt_BR", "nl_NL", "nl_BE", "pl_PL", "cs_CZ", "hu_HU", "sv_SE", "da_DK", "fi_FI", "no_NO", "vi_VN",
    "id_ID",
)
ADDRESS_TEMPLATES = (
    "We moved to {} last spring.",
    "Send the parcel to {} please.",
    "my new place is {}, second floor",
    "The viewing is at {} on Saturday.",
    "Delivery address: {}",
    "She grew up at {} and still owns it.",
)
# (Faker locale, stdnum module) whose Faker ``ssn()`` is that scheme's number.
NATIONAL_ID_SCHEMES = (
    ("fr_FR", "fr.nir"), ("it_IT", "it.codicefiscale"), ("pl_PL", "pl.pesel"), ("nl_NL", "nl.bsn"),
    ("sv_SE", "se.personnummer"), ("pt_BR", "br.cpf"), ("fi_FI", "fi.hetu"), ("no_NO", "no.fodselsnummer"),
    ("et_EE", "ee.ik"), ("tr_TR", "tr.tckimlik"), ("en_CA", "ca.sin"), ("fr_CH", "ch.ssn"), ("ro_RO", "ro.cnp"),
    ("hr_HR", "hr.oib"), ("zh_CN", "cn.ric"), ("ko_KR", "kr.rrn"),
)
ID_TEMPLATES = (
    "My national ID number is {}.",
    "here's my personal identity number: {}",
    "The form asks for a tax id, mine is {}",
    "ID {} (please keep it private)",
    "for the bank they need my identity code {}",
)
PPS_TEMPLATES = ("My PPS number is {}.", "PPSN: {}", "the revenue letter quotes {} as my PPS", "pps no {}")
PASSPORT_TEMPLATES = (
    "My passport number is {}.", "Passport no. {}, expires 2031.", "passport: {}", "I renewed passport {} in May.",
)
POSTCODE_TEMPLATES = (
    "My Eircode is {}.", "the eircode {} should find the house", "Post it to the office, {}.",
    "it's in {}, near the station",
)
DOB_TEMPLATES = (
    "I was born on {}.", "DOB: {}", "date of birth {}", "My birthday is {} so book the table.",
    "she was born {} in a small town", "d.o.b. {}", "Born {}, allergic to penicillin.",
    "his date of birth is {}, please update the file",
)
PHONE_LOCALES = (
    "en_US", "en_GB", "en_AU", "en_CA", "en_IE", "en_NZ", "en_IN", "de_DE", "de_AT", "de_CH", "fr_FR", "fr_CH",
    "it_IT", "es_ES", "es_MX", "pt_PT", "pt_BR", "nl_NL", "nl_BE", "sv_SE", "fi_FI", "da_DK", "no_NO", "pl_PL",
    "cs_CZ", "sk_SK", "hu_HU", "ro_RO", "el_GR", "tr_TR", "ru_RU", "uk_UA", "ja_JP", "zh_CN", "ko_KR", "he_IL",
    "hr_HR", "sl_SI", "et_EE", "lv_LV", "lt_LT", "bg_BG", "id_ID", "th_TH", "vi_VN", "ar_EG", "fa_IR", "es_AR",
    "es_CO", "es_CL",
)
PHONE_TEMPLATES = (
    "Ring me on {} after six.", "new mobile: {}", "{} is the number for the clinic", "text {} when you land",
    "You can reach the plumber at {}.", "The fax is {}, if anyone still uses that.",
)
NOT_PHONE_TEMPLATES = (
    "Order {} shipped today.", "account {} is overdrawn", "The tracking code is {}.", "build {} failed",
    "Invoice total {} EUR", "row {} in the export is empty", "the logs show {} twice",
)
IDENTIFIER_TEMPLATES = (
    "{}", "Stored {} for later.", "value {} ok", "checkpoint {} written", "Please keep {} as it is.",
    "ref {}", "the key was {}", "Look up {} tomorrow.",
)
COMMON_WORD_SENTENCES = (
    "We ordered Thai curry and spring rolls.", "The ridge runner trail is closed after the storm.",
    "I love Thai food, especially green curry.", "Ridge lines look blue in the evening.",
    "French toast for breakfast again.", "The Turkish delight was too sweet.", "Grace period ends on Monday.",
    "Hope the weather holds.", "Joy of cooking is on the shelf.", "Rose wine goes with the fish.",
    "Victoria sponge for the party.", "Amber alert was cancelled.", "Chase the invoice tomorrow.",
    "Mark the calendar for the review.", "Will you bring the charger?", "Sky was clear all night.",
    "Dawn swim at the lake.", "Bishop to e5 was a blunder.", "Baker's yeast is in the fridge.",
    "Cooper mini needs new tyres.", "Miller moths everywhere this year.", "Japanese maple in the garden.",
    "Mexican wave at the stadium.", "Brook trout for dinner.", "Hunter boots are on sale.",
    "German shepherd puppies are cute.", "Irish stew needs more thyme.", "Dutch oven bread came out fine.",
    "Swiss chard grows fast.", "Indian summer this year.", "Fisher price toys in the attic.",
    "Forest green paint for the door.", "Sterling silver earrings.", "Crystal clear water.",
    "Pearl barley risotto.", "Ruby slippers costume.", "Iris scan at the airport.", "Olive oil is cheaper here.",
    "Heather on the hills.", "Autumn leaves in the gutter.",
)


def _record(template: str, value: str, entity_type: str) -> Record:
    start = template.index("{}")
    return {
        "full_text": template.format(value),
        "spans": [{"entity_type": entity_type, "entity_value": value, "start_position": start,
                   "end_position": start + len(value)}],
    }


def _names(pick: random.Random, per_set: int) -> tuple[list[Record], list[Record]]:
    from mimesis import Locale, Person

    faker_records, mimesis_records = [], []
    for index in range(per_set):
        template = pick.choice(NAME_TEMPLATES)
        if index % 2:
            person = Person(Locale(pick.choice(MIMESIS_LOCALES)), seed=pick.randrange(2**31))
            name = f"{person.first_name()} {person.last_name()}"
        else:
            fake = Faker(pick.choice(NAME_LOCALES))
            fake.seed_instance(pick.randrange(2**31))
            name = f"{fake.first_name()} {fake.last_name()}"
        if index % 3 == 0:
            name = name.lower()
        (mimesis_records if index % 2 else faker_records).append(_record(template, name, "PERSON"))
    return faker_records + mimesis_records, mimesis_records


def _addresses(pick: random.Random, per_set: int) -> list[Record]:
    records = []
    for _ in range(per_set):
        fake = Faker(pick.choice(ADDRESS_LOCALES))
        fake.seed_instance(pick.randrange(2**31))
        records.append(_record(pick.choice(ADDRESS_TEMPLATES), fake.street_address(), "STREET_ADDRESS"))
    return records


MIMESIS_ADDRESS_LOCALES = ("cs", "da", "de", "de-at", "de-ch", "en", "en-au", "en-ca", "en-gb", "es", "es-mx", "fi",
                           "fr", "hu", "it", "nl", "nl-be", "no", "pl", "pt", "pt-br", "sk", "sv", "tr", "et",
                           "hr", "is")  # fmt: skip


def _addresses_mimesis(pick: random.Random, per_set: int) -> list[Record]:
    """Street addresses of mimesis' own lists: the street words the detector reads from Faker are not its source."""
    from mimesis import Address, Locale

    records = []
    for _ in range(per_set):
        address = Address(Locale(pick.choice(MIMESIS_ADDRESS_LOCALES)), seed=pick.randrange(2**31))
        records.append(_record(pick.choice(ADDRESS_TEMPLATES), address.address(), "STREET_ADDRESS"))
    return records


def _pps(pick: random.Random) -> str:
    from stdnum.ie import vat

    digits = "".join(pick.choice(string.digits) for _ in range(7))
    suffix = pick.choice(["", "", "W", "A", "H"])  # the second letter: W (before 2013), A or H (since)
    if suffix in {"A", "H"}:
        return digits + vat.calc_check_digit(digits + suffix) + suffix
    return digits + vat.calc_check_digit(digits) + suffix


def _ids(pick: random.Random, per_set: int) -> list[Record]:
    import importlib

    from stdnum.ie import pps

    records = []
    modules = {module: importlib.import_module(f"stdnum.{module}") for _, module in NATIONAL_ID_SCHEMES}
    for index in range(per_set):
        kind = index % 5
        fake = Faker("en_IE")
        fake.seed_instance(pick.randrange(2**31))
        if kind == 0:
            locale, module = pick.choice(NATIONAL_ID_SCHEMES)
            local = Faker(locale)
            local.seed_instance(pick.randrange(2**31))
            value = local.ssn()
            if not modules[module].is_valid(value):
                continue  # Faker's generator is not always right; an invalid number is nobody's
            records.append(_record(pick.choice(ID_TEMPLATES), value, "NATIONAL_ID"))
        elif kind == 1:
            value = _pps(pick)
            assert pps.is_valid(value), value
            records.append(_record(pick.choice(PPS_TEMPLATES), value, "NATIONAL_ID"))
        elif kind == 2:
            letters = "".join(pick.choice(string.ascii_uppercase) for _ in range(pick.choice([0, 1, 2])))
            value = letters + "".join(pick.choice(string.digits) for _ in range(9 - len(letters)))
            records.append(_record(pick.choice(PASSPORT_TEMPLATES), value, "PASSPORT"))
        elif kind == 3:
            records.append(_record(pick.choice(POSTCODE_TEMPLATES), fake.postcode(), "ZIP_CODE"))
        else:
            local = Faker(pick.choice(["en_GB", "en_CA"]))
            local.seed_instance(pick.randrange(2**31))
            records.append(_record(pick.choice(POSTCODE_TEMPLATES[2:]), local.postcode(), "ZIP_CODE"))
    return records


def _date_of_birth(pick: random.Random) -> str:
    fake = Faker()
    fake.seed_instance(pick.randrange(2**31))
    day = fake.date_of_birth(minimum_age=1, maximum_age=95)
    ordinal = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}.get(day.day, "th")
    month, short = day.strftime("%B"), day.strftime("%b")
    return pick.choice([
        f"{day.day:02d}/{day.month:02d}/{day.year}", f"{day.month}/{day.day}/{day.year}", day.isoformat(),
        f"{day.day}.{day.month}.{day.year}", f"{day.day:02d}-{day.month:02d}-{day.year}",
        f"{day.day} {month} {day.year}", f"{month} {day.day}, {day.year}",
        f"the {day.day}{ordinal} of {month} {day.year}",
        f"{short} {day.day} {day.year}",
        f"{day.day}{ordinal} {month} {day.year}", f"{day.day:02d}/{day.month:02d}/{day.year % 100:02d}",
        f"{day.year}/{day.month:02d}/{day.day:02d}",
    ])


def _dobs(pick: random.Random, per_set: int) -> list[Record]:
    return [_record(pick.choice(DOB_TEMPLATES), _date_of_birth(pick), "DATE_TIME") for _ in range(per_set)]


def _not_a_phone(pick: random.Random, fake: Faker) -> str:
    draws: list[Callable[[], str]] = [
        lambda: "".join(pick.choice(string.digits) for _ in range(pick.randint(12, 20))),
        lambda: f"{pick.randint(10**7, 10**9)}",
        lambda: str(fake.date_time()),
        lambda: f"{pick.randint(1, 9999):,}.{pick.randint(0, 99):02d}",
        lambda: f"{pick.randint(100, 999)}-{pick.randint(1000, 9999)}-{pick.randint(10**5, 10**6 - 1)}",
        lambda: f"{pick.randint(1000, 9999)} {pick.randint(1000, 9999)} {pick.randint(1000, 9999)}",
        lambda: fake.bban(),
        lambda: f"{fake.unix_time():.0f}",
    ]
    return pick.choice(draws)()


def _phones(pick: random.Random, per_set: int) -> list[Record]:
    records = []
    for index in range(per_set):
        fake = Faker(pick.choice(PHONE_LOCALES))
        fake.seed_instance(pick.randrange(2**31))
        if index % 2:
            records.append({"full_text": pick.choice(NOT_PHONE_TEMPLATES).format(_not_a_phone(pick, fake)),
                            "spans": []})
        else:
            records.append(_record(pick.choice(PHONE_TEMPLATES), fake.phone_number(), "PHONE_NUMBER"))
    return records


def _identifier(pick: random.Random) -> str:
    hexdigits = "0123456789abcdef"

    def hexes(count: int) -> str:
        return "".join(pick.choice(hexdigits) for _ in range(count))

    word = pick.choice(["marker", "probe", "item", "note", "token", "sample", "record", "entry", "case", "trace",
                        "ridge", "grace", "mark", "summer", "victoria", "jordan", "paris"])
    return pick.choice([
        f"{word}-{pick.randint(0, 60)}-{pick.randint(0, 9)}-{hexes(6)}",
        f"{word}_{pick.randint(0, 999)}_{hexes(8)}",
        f"{hexes(8)}-{hexes(4)}-{hexes(4)}-{hexes(4)}-{hexes(12)}",
        hexes(40),
        f"{word.capitalize()}-{pick.randint(1, 99)}",
        f"v{pick.randint(0, 9)}.{pick.randint(0, 30)}.{pick.randint(0, 99)}-{word}",
        f"{word}/{word}-{hexes(5)}",
    ])


def _false_alarms(pick: random.Random, per_set: int) -> list[Record]:
    records: list[Record] = [{"full_text": sentence, "spans": []} for sentence in COMMON_WORD_SENTENCES]
    while len(records) < per_set:
        records.append({"full_text": pick.choice(IDENTIFIER_TEMPLATES).format(_identifier(pick)), "spans": []})
    return records


ORDINARY_KINDS = ("name-like word", "place-like noun", "nationality + thing", "product", "identifier")
NAME_LIKE_TEMPLATES = (
    "{W} {things} are on sale this week.", "{W} {thing} is back in stock.", "We bought {W} {things} at the market.",
    "The {W} {thing} was too expensive.", "{W} {thing} recipe from the old book.", "Is the {W} {thing} any good?",
    "{W} {things} everywhere this year.", "Got a {W} {thing} for the kitchen.",
)
PLACE_LIKE_TEMPLATES = (
    "{P} via the coast is shorter.", "{P} views from the terrace are lovely.", "{P} access is closed after dark.",
    "Take the {p} trail past the farm.", "The {p} was flooded again.", "{P} maintenance starts on Monday.",
    "We walked along the {p} for an hour.", "{P} signs point the wrong way.",
)
NATIONALITY_TEMPLATES = (
    "We had {N} {food} for dinner.", "The {N} {food} was lovely.", "{N} {food} is my favourite.",
    "Try the {N} {food} at the corner place.", "I'm making {N} {food} tonight.",
)
PRODUCT_TEMPLATES = (
    "My {X} needs a new battery.", "Is the {X} worth it?", "The {X} arrived with a scratch.",
    "Comparing the {X} with the older one.", "{X} support ends next year.", "Returned the {X} today.",
)
THINGS = (
    "boot", "jacket", "lamp", "sauce", "paint", "tile", "chair", "mug", "blanket", "candle", "glove", "kettle",
    "bread", "jam", "cheese", "pie", "soap", "towel", "basket", "pillow", "scarf", "sock", "plate", "bowl",
)


@functools.cache
def _ordinary_vocabulary() -> dict[str, tuple[str, ...]]:
    """Word lists drawn from installed data (mimesis, Faker, WordNet through the pinned spaCy model)."""
    import faker.providers.address.en_US as us_address
    import faker.providers.person.en_US as us_person
    import mimesis
    from agentmem.adapters.local.english_words import NOUN, wordnet_words
    from agentmem.adapters.local.name_gazetteer import shared_gazetteer

    data = Path(mimesis.__file__).parent / "datasets" / "en"
    text = json.loads((data / "text.json").read_text("utf-8"))
    food = json.loads((data / "food.json").read_text("utf-8"))
    person = json.loads((data / "person.json").read_text("utf-8"))
    nouns = wordnet_words(NOUN)
    gazetteer = shared_gazetteer()
    given = {name.casefold() for name in us_person.Provider.first_names}
    given |= {name.casefold() for names in person["names"].values() for name in names}
    words = {word.casefold() for word in text["words"]} | {word.casefold() for word in text["color"]}
    words |= {part.casefold() for values in food.values() for value in values for part in value.split()}
    # Not a surname written capitalised four times as often as in lower case (spaCy's counts, ``word_case``):
    # "The Thompson bowl", "Is the Jones pillow any good?" name a family, as "the Johnson novel" names a
    # person in Presidio's labels. Surnames that are common words stay: "Wolf jam", "a Baker chair".
    name_like = sorted(w for w in words if w.isalpha() and len(w) > 2 and w in nouns and gazetteer.is_name(w)
                       and w not in given and not _mostly_a_surname(w))
    places = sorted({s.casefold() for s in us_address.Provider.street_suffixes if s.casefold() in nouns})
    foods = sorted({v.casefold() for key in ("vegetables", "fruits", "dishes") for v in food.get(key, ())})
    return {"name_like": tuple(name_like), "places": tuple(places), "foods": tuple(foods),
            "nationalities": tuple(sorted(set(person["nationality"])))}


def _mostly_a_surname(word: str) -> bool:
    import math

    from agentmem.adapters.local.name_gazetteer import shared_gazetteer
    from agentmem.adapters.local.word_case import case_ratio

    ratio = case_ratio(word)
    return shared_gazetteer().is_last(word) and ratio is not None and ratio < -math.log(4)


def _product(pick: random.Random) -> str:
    from mimesis import Development, Hardware, Transport

    seed = pick.randrange(2**31)
    draws: list[Callable[[], str]] = [
        lambda: Transport(seed=seed).car(), lambda: Hardware(seed=seed).phone_model(),
        lambda: Development(seed=seed).os(), lambda: Transport(seed=seed).manufacturer(),
        lambda: Hardware(seed=seed).manufacturer(),
    ]
    return pick.choice(draws)()


def _ordinary(pick: random.Random, per_set: int) -> list[Record]:
    """Sentences without personal data, ``per_set`` of them, a fifth of each kind in ORDINARY_KINDS."""
    vocabulary = _ordinary_vocabulary()
    records: list[Record] = []
    for index in range(per_set):
        kind = ORDINARY_KINDS[index % len(ORDINARY_KINDS)]
        thing = pick.choice(THINGS)
        if kind == "name-like word":
            text = pick.choice(NAME_LIKE_TEMPLATES).format(
                W=pick.choice(vocabulary["name_like"]).capitalize(), thing=thing, things=thing + "s")
        elif kind == "place-like noun":
            place = pick.choice(vocabulary["places"])
            text = pick.choice(PLACE_LIKE_TEMPLATES).format(P=place.capitalize(), p=place)
        elif kind == "nationality + thing":
            text = pick.choice(NATIONALITY_TEMPLATES).format(
                N=pick.choice(vocabulary["nationalities"]), food=pick.choice(vocabulary["foods"]))
        elif kind == "product":
            text = pick.choice(PRODUCT_TEMPLATES).format(X=_product(pick))
        else:
            text = pick.choice(IDENTIFIER_TEMPLATES).format(_identifier(pick))
        records.append({"full_text": text, "spans": [], "kind": kind})
    return records


def build_sets(per_set: int, seed: int) -> dict[str, list[Record]]:
    """The sets, the same for the same ``per_set`` and ``seed``."""
    pick = random.Random(seed)
    Faker.seed(seed)
    names, names_mimesis = _names(pick, per_set)
    sets = {
        "names": names, "names-mimesis": names_mimesis, "addresses": _addresses(pick, per_set),
        "ids": _ids(pick, per_set), "dob": _dobs(pick, per_set), "phones": _phones(pick, per_set),
        "false-alarms": _false_alarms(pick, per_set),
    }
    # Drawn from generators of their own so that adding them leaves the other sets as they were.
    sets["addresses-mimesis"] = _addresses_mimesis(random.Random(f"addresses-mimesis-{seed}"), per_set)
    sets["ordinary"] = _ordinary(random.Random(f"ordinary-{seed}"), per_set)
    return sets


EARLIER_POOL = ("names", "addresses", "ids", "dob", "phones", "false-alarms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-set", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--dump", type=Path, help="write each set as DIR/<set>.json (Presidio format)")
    parser.add_argument("--detector", choices=["local", "regex"], default="local")
    parser.add_argument("--show-errors", type=int, default=0, help="print up to N misses and false alarms per set")
    args = parser.parse_args()
    sets = build_sets(args.per_set, args.seed)
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
        for name, records in sets.items():
            (args.dump / f"{name}.json").write_text(json.dumps(records, ensure_ascii=False, indent=1), "utf-8")
    if args.detector == "local":
        from agentmem.adapters.local.presidio_pii import LocalPiiDetector

        detector: Any = LocalPiiDetector()
    else:
        from agentmem.adapters.local.pii_regex import RegexPiiDetector

        detector = RegexPiiDetector()
    for name, records in sets.items():
        print(f"\n{name} ({len(records)} records, seed {args.seed})")
        print(format_table(evaluate_detector(detector, records)))
        flagged = 0
        shown = 0
        for record in records:
            gold = [(s["entity_type"], s["start_position"], s["end_position"]) for s in record["spans"]]
            spans = detector.detect(record["full_text"])
            wrong = [s for s in spans if not any(t == s.entity_type and a < s.end and s.start < b for t, a, b in gold)]
            missed = [g for g in gold if not any(t.entity_type == g[0] and g[1] < t.end and t.start < g[2]
                                                 for t in spans)]
            flagged += bool(spans) and not gold
            if (wrong or missed) and shown < args.show_errors:
                shown += 1
                print(f"  {record['full_text']!r}: false {[(s.entity_type, s.value) for s in wrong]} "
                      f"missed {[record['full_text'][a:b] for _, a, b in missed]}")
        if name == "false-alarms" or name == "phones":
            empty = sum(not record["spans"] for record in records)
            print(f"records without personal data that had a span masked: {flagged}/{empty} = {flagged / empty:.3f}")
        if name == "false-alarms":
            words = len(COMMON_WORD_SENTENCES)
            flagged_words = sum(bool(detector.detect(record["full_text"])) for record in records[:words])
            flagged_ids = flagged - flagged_words
            print(f"  identifiers: {flagged_ids}/{len(records) - words} = {flagged_ids / (len(records) - words):.3f}; "
                  f"common-word sentences: {flagged_words}/{words} = {flagged_words / words:.3f}")
        if name == "ordinary":
            masked = {kind: 0 for kind in ORDINARY_KINDS}
            for record in records:
                masked[record["kind"]] += bool(detector.detect(record["full_text"]))
            total = sum(masked.values())
            print(f"ordinary sentences masked: {total}/{len(records)} = {total / len(records):.3%}")
            for kind in ORDINARY_KINDS:
                count = sum(record["kind"] == kind for record in records)
                print(f"  {kind}: {masked[kind]}/{count}")
    # Pooled, a type's precision counts its false alarms in every set (a street read as a person too).
    pooled = [record for name, records in sets.items() if name != "names-mimesis" for record in records]
    print(f"\nall sets pooled ({len(pooled)} records, seed {args.seed})")
    print(format_table(evaluate_detector(detector, pooled)))
    # The pool the figures before the ordinary and mimesis-address sets were taken on, to compare with them.
    earlier = [record for name, records in sets.items() if name in EARLIER_POOL for record in records]
    print(f"\nthe earlier pool: {', '.join(EARLIER_POOL)} ({len(earlier)} records, seed {args.seed})")
    print(format_table(evaluate_detector(detector, earlier)))


if __name__ == "__main__":
    main()
