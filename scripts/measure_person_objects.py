"""Names as the object of a verb that takes a person, and firms and towns in the same place.

    .venv/bin/python scripts/measure_person_objects.py [--seed 9] [--count 400]

Draws, with a fixed seed, mimesis given names and surnames of 16 locales (names the gazetteer never saw)
into nine sentences whose verb takes someone ("Please ring {}", "Remind {} about the meeting."), and prints
the share the local detector finds as PERSON (recall), then the same for a given name alone ("Ring Tomasz
tomorrow"). Then draws mimesis firm names, towns, and "town +
Council/Office/Desk" or "manufacturer + Support/Sales" into the same sentences and prints the share with a
PERSON span: none of them is a person (the false-alarm side of the same rule). Seed 5 and firm seeds 1 and 2
were developed on; report others. Last, the same names in lower case in seven sentences where the person is
followed by what follows an object ("i told {} the plan", "i met {} in lisbon"), and the firms and towns in
lower case in them; then both before an adverb that ends the clause ("i told {} too."); last, three-word names
in the first sentences, masked whole ("Remind Ana Lucía Gómez"). Asserts nothing.
"""

from __future__ import annotations

import argparse
import random

from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from mimesis import Address, Finance, Hardware, Person
from mimesis.locales import Locale

NAME_LOCALES = (
    Locale.EN, Locale.DE, Locale.FR, Locale.ES, Locale.IT, Locale.PL, Locale.NL, Locale.PT, Locale.TR, Locale.FI,
    Locale.DA, Locale.SV, Locale.CS, Locale.HU, Locale.EN_AU, Locale.EN_CA,
)  # fmt: skip
SENTENCES = (
    "Please ring {}", "Could you call {} tomorrow?", "I emailed {} the form.", "Ask {} to sign it.",
    "We thanked {} for the help.", "Remind {} about the meeting.", "Please contact {} today.",
    "I met {} at the station.", "Text {} when you land.",
)  # fmt: skip
# Written in lower case, the person followed by what follows an object: another object, "in", "as", "to", "last".
LOWER_SENTENCES = (
    "i told {} the plan", "can you send {} the invoice", "i gave {} my keys", "i met {} in lisbon",
    "we hired {} as a designer", "ask {} to review it", "i had dinner with {} last night",
)  # fmt: skip
# Written in lower case, the person followed by an adverb that ends the clause: "too", "twice", "first".
ADVERB_SENTENCES = (
    "i told {} too.", "i called {} twice", "we invited {} also", "please ring {} first", "i met {} once",
    "ask {} directly", "i emailed {} earlier", "we thanked {} personally",
)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--count", type=int, default=400)
    args = parser.parse_args()
    detector = LocalPiiDetector()

    rng = random.Random(args.seed)
    people = [Person(locale, seed=args.seed) for locale in NAME_LOCALES]
    found = 0
    for _ in range(args.count):
        person = rng.choice(people)
        name = f"{person.first_name()} {person.last_name()}"
        text = rng.choice(SENTENCES).format(name)
        start = text.index(name)
        end = start + len(name)
        found += any(
            span.entity_type == "PERSON" and span.start < end and start < span.end for span in detector.detect(text)
        )
    print(f"names after a verb that takes someone (seed {args.seed}): recall {found}/{args.count} = "
          f"{found / args.count:.3f}")
    alone = 0
    for _ in range(args.count):
        name = rng.choice(people).first_name()
        text = rng.choice(SENTENCES).format(name)
        start = text.index(name)
        alone += any(
            span.entity_type == "PERSON" and span.start < start + len(name) and start < span.end
            for span in detector.detect(text)
        )
    print(f"given names alone in the same sentences: recall {alone}/{args.count} = {alone / args.count:.3f}")

    firms = [Finance(locale, seed=args.seed) for locale in (Locale.EN, Locale.DE, Locale.FR, Locale.EN_GB)]
    towns = [Address(locale, seed=args.seed)
             for locale in (Locale.EN, Locale.DE, Locale.FR, Locale.EN_GB, Locale.ES, Locale.IT)]
    hardware = Hardware(seed=args.seed)

    def thing() -> str:
        kind = rng.randrange(4)
        if kind == 0:
            return rng.choice(firms).company()
        if kind == 1:
            return f"{rng.choice(towns).city()} {rng.choice(['Council', 'Office', 'Support', 'Desk', 'Team'])}"
        if kind == 2:
            return rng.choice(towns).city()
        return f"{hardware.manufacturer()} {rng.choice(['Support', 'Sales', 'Service'])}"

    alarms = sum(
        any(span.entity_type == "PERSON" for span in detector.detect(rng.choice(SENTENCES).format(thing())))
        for _ in range(args.count)
    )
    print(f"firms and towns in the same sentences: PERSON on {alarms}/{args.count} = {alarms / args.count:.3f}")

    lower = 0
    for _ in range(args.count):
        person = rng.choice(people)
        name = f"{person.first_name()} {person.last_name()}".lower()
        text = rng.choice(LOWER_SENTENCES).format(name)
        start = text.index(name)
        lower += any(
            span.entity_type == "PERSON" and span.start < start + len(name) and start < span.end
            for span in detector.detect(text)
        )
    print(f"lower-case names before what follows an object: recall {lower}/{args.count} = {lower / args.count:.3f}")
    lower_alarms = 0
    for _ in range(args.count):
        text = rng.choice(LOWER_SENTENCES).format(thing().lower())
        lower_alarms += any(span.entity_type == "PERSON" for span in detector.detect(text))
    print(f"firms and towns in lower case in the same sentences: PERSON on {lower_alarms}/{args.count} = "
          f"{lower_alarms / args.count:.3f}")

    adverb = 0
    for _ in range(args.count):
        person = rng.choice(people)
        name = f"{person.first_name()} {person.last_name()}".lower()
        text = rng.choice(ADVERB_SENTENCES).format(name)
        start = text.index(name)
        adverb += any(
            span.entity_type == "PERSON" and span.start < start + len(name) and start < span.end
            for span in detector.detect(text)
        )
    print(f"lower-case names before an adverb that ends the clause: recall {adverb}/{args.count} = "
          f"{adverb / args.count:.3f}")
    adverb_alarms = 0
    for _ in range(args.count):
        text = rng.choice(ADVERB_SENTENCES).format(thing().lower())
        adverb_alarms += any(span.entity_type == "PERSON" for span in detector.detect(text))
    print(f"firms and towns in lower case before the same adverbs: PERSON on {adverb_alarms}/{args.count} = "
          f"{adverb_alarms / args.count:.3f}")

    three = 0
    for _ in range(args.count):
        person = rng.choice(people)
        # a given name, a second given name or a surname, a surname: "Ana Lucía Gómez", "João Silva Santos"
        name = f"{person.first_name()} {rng.choice([person.first_name, person.last_name])()} {person.last_name()}"
        text = rng.choice(SENTENCES).format(name)
        start = text.index(name)
        three += any(
            span.entity_type == "PERSON" and span.start <= start and start + len(name) <= span.end
            for span in detector.detect(text)
        )
    print(f"three-word names in the same sentences, masked whole: recall {three}/{args.count} = "
          f"{three / args.count:.3f}")


if __name__ == "__main__":
    main()
