"""Two edges of a street address: past an abbreviation's full stop, and at the end of its sentence.

    .venv/bin/python scripts/measure_address_edges.py [--seed 31] [--count 200]

With a fixed seed, Faker en_US surnames, cities, states and ZIP codes make (1) addresses written with an
abbreviated street word, then a unit ("4471 Quillon St. Apt 7C, Marrowfield, IL 62791"), and prints how
many kept a digit unmasked; (2) sentences that end on a street with a full street word and open the next
with a given name ("She lives at 12 Oak Street. Mary is great."), and prints how many address spans ran
past the full stop; (3) per locale (en_IE, en_GB, en_US, en_AU), streets followed by a town and a postal
code ("Send it to 14 Quay Street, Galway H91 X2Y3 please."), and prints how many towns were left raw.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import string

from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from faker import Faker

ABBREVIATED = ("St", "Ave", "Rd", "Blvd", "Dr", "Ln")
UNITS = ("Apt", "Suite", "Unit")
FULL = ("Street", "Avenue", "Crescent", "Terrace", "Parkway", "Circle")
NEXT_SENTENCE = ("is great", "visits often", "owns it")
TOWN_SENTENCES = ("Send it to {}, {} {} please.", "My address is {}, {} {}.", "We moved to {}, {} {} last year.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--count", type=int, default=200)
    args = parser.parse_args()
    detector = LocalPiiDetector()
    fake = Faker("en_US")
    fake.seed_instance(args.seed)
    rng = random.Random(args.seed)

    raw = 0
    for _ in range(args.count):
        unit = f"{rng.choice(UNITS)} {rng.randint(2, 999)}{rng.choice(['', 'B', 'C'])}"
        address = (f"{rng.randint(1, 9999)} {fake.last_name()} {rng.choice(ABBREVIATED)}. {unit}, {fake.city()}, "
                   f"{fake.state_abbr()} {fake.zipcode()}")
        text = f"Please ship it to {address} by Friday."
        masked = [False] * len(text)
        for span in detector.detect(text):
            masked[span.start : span.end] = [True] * (span.end - span.start)
        start = text.index(address)
        raw += any(char.isdigit() and not masked[start + i] for i, char in enumerate(address))
    print(f"abbreviated street, unit, city, state, ZIP: {raw}/{args.count} with a digit left raw")

    crossed = 0
    for _ in range(args.count):
        street = f"{rng.randint(1, 9999)} {fake.last_name()} {rng.choice(FULL)}"
        text = f"She lives at {street}. {fake.first_name()} {rng.choice(NEXT_SENTENCE)}."
        end = text.index(street) + len(street)
        crossed += any(
            span.entity_type == "STREET_ADDRESS" and span.end > end for span in detector.detect(text)
        )
    print(f"a street ending its sentence, a name opening the next: {crossed}/{args.count} address spans run past "
          "the full stop")

    raw_towns = {}
    for locale in ("en_IE", "en_GB", "en_US", "en_AU"):
        local = Faker(locale)
        local.seed_instance(args.seed)
        raw_towns[locale] = 0
        for _ in range(args.count):
            town = local.city()
            street = f"{rng.randint(1, 200)} {local.last_name()} {rng.choice(FULL[:2])}"
            text = rng.choice(TOWN_SENTENCES).format(street, town, postal_code(locale, local, rng))
            start = text.index(", " + town) + 2
            raw_towns[locale] += not any(
                span.start <= start and span.end >= start + len(town) for span in detector.detect(text)
            )
    print(f"towns between a street and a postal code left raw (of {args.count}): "
          + ", ".join(f"{locale} {raw}" for locale, raw in raw_towns.items()))


def postal_code(locale: str, fake: Faker, rng: random.Random) -> str:
    """An Eircode's shape (a routing key, then four letters and digits), or the locale's own postcode."""
    if locale == "en_IE":
        letters = string.ascii_uppercase
        return (f"{rng.choice('ADEFHKNPRTVWXY')}{rng.randint(10, 99)} {rng.choice(letters)}{rng.randint(1, 9)}"
                f"{rng.choice(letters)}{rng.randint(1, 9)}")
    if locale == "en_GB":
        return str(fake.postcode())
    return f"{fake.state_abbr()} {fake.postcode() if locale == 'en_AU' else fake.zipcode()}"


if __name__ == "__main__":
    main()
