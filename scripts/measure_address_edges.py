"""Two edges of a street address: past an abbreviation's full stop, and at the end of its sentence.

    .venv/bin/python scripts/measure_address_edges.py [--seed 31] [--count 200]

With a fixed seed, Faker en_US surnames, cities, states and ZIP codes make (1) addresses written with an
abbreviated street word, then a unit ("4471 Quillon St. Apt 7C, Marrowfield, IL 62791"), and prints how
many kept a digit unmasked; (2) sentences that end on a street with a full street word and open the next
with a given name ("She lives at 12 Oak Street. Mary is great."), and prints how many address spans ran
past the full stop. Asserts nothing.
"""

from __future__ import annotations

import argparse
import random

from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from faker import Faker

ABBREVIATED = ("St", "Ave", "Rd", "Blvd", "Dr", "Ln")
UNITS = ("Apt", "Suite", "Unit")
FULL = ("Street", "Avenue", "Crescent", "Terrace", "Parkway", "Circle")
NEXT_SENTENCE = ("is great", "visits often", "owns it")


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


if __name__ == "__main__":
    main()
