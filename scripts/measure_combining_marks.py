"""Names with accents, written precomposed (NFC) and decomposed (NFD: a letter, then combining marks).

    .venv/bin/python scripts/measure_combining_marks.py [--seed 9] [--count 400]

Draws, with a fixed seed, mimesis given names and surnames of locales whose names carry accents (names
the gazetteer never saw), keeps those with an accent, puts each into one of eight sentences ("Hello,
I'm {}.", "{} called again.") and prints the share the local detector finds as PERSON, for the same
sentences in NFC and in NFD. Text typed on some systems and copied from some PDFs arrives decomposed,
and Yoruba or Vietnamese letters with two accents have no precomposed form at all. Then the same for
a person-free text with decomposed accents (towns and words): the share with a PERSON span. Asserts
nothing.
"""

from __future__ import annotations

import argparse
import random
import unicodedata

from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from mimesis import Address, Person
from mimesis.locales import Locale

LOCALES = (
    Locale.CS, Locale.DE, Locale.ES, Locale.FR, Locale.HU, Locale.IS, Locale.PL, Locale.PT, Locale.SK, Locale.TR,
    Locale.HR, Locale.ET, Locale.DA, Locale.NO,
)  # fmt: skip
SENTENCES = (
    "Hello, I'm {}.", "{} called again this morning.", "Please ring {} tomorrow.", "My landlord is {}.",
    "I had lunch with {} yesterday.", "The form was signed by {}.", "Can you send {} the invoice?",
    "{} and I split the bill.",
)  # fmt: skip
PLACES = (
    "We drove to {} last week.", "The office in {} is closed.", "It rained all day in {}.",
    "The café near {} serves crêpes.",
)  # fmt: skip


def accented(text: str) -> bool:
    return unicodedata.normalize("NFD", text) != text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--count", type=int, default=400)
    args = parser.parse_args()
    detector = LocalPiiDetector()
    rng = random.Random(args.seed)
    people = [Person(locale, seed=args.seed) for locale in LOCALES]
    towns = [Address(locale, seed=args.seed) for locale in LOCALES]

    names: list[str] = []
    while len(names) < args.count:
        person = rng.choice(people)
        name = f"{person.first_name()} {person.last_name()}"
        if accented(name):
            names.append(name)
    texts = [(rng.choice(SENTENCES), name) for name in names]
    for form in ("NFC", "NFD"):
        found = 0
        for sentence, name in texts:
            text = unicodedata.normalize(form, sentence.format(name))
            value = unicodedata.normalize(form, name)
            start = text.index(value)
            end = start + len(value)
            found += any(
                span.entity_type == "PERSON" and span.start < end and start < span.end
                for span in detector.detect(text)
            )
        print(f"accented names, {form} (seed {args.seed}): recall {found}/{args.count} = {found / args.count:.3f}")

    places: list[str] = []
    while len(places) < args.count:
        town = rng.choice(towns).city()
        if accented(town):
            places.append(town)
    place_texts = [rng.choice(PLACES).format(town) for town in places]
    for form in ("NFC", "NFD"):
        alarms = sum(
            any(span.entity_type == "PERSON" for span in detector.detect(unicodedata.normalize(form, text)))
            for text in place_texts
        )
        print(f"accented towns, {form}: PERSON on {alarms}/{args.count} = {alarms / args.count:.3f}")


if __name__ == "__main__":
    main()
