"""Names written in a caseless script inside English sentences, from lists the detector never read.

    .venv/bin/python scripts/measure_script_names.py [--seed 9] [--count 300]

The detector's lists of such names are Faker's (``script_names``). This draws, with a fixed seed, mimesis'
given names and surnames of its Chinese, Japanese, Korean, Arabic (4 locales) and Persian locales, written
in their own order (family name first in Chinese, Japanese and Korean, with a space in Japanese), into
the templates of ``measure_unseen_pii.py``, and prints the share found as PERSON per script. Then the same
templates with mimesis' cities of those locales (places: a PERSON span there is the wrong type, though
the city is masked) and with two of its common words ("random words": nothing in them is personal data),
and prints the share with a PERSON span. Asserts nothing.
"""

from __future__ import annotations

import argparse
import random

from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from measure_unseen_pii import NAME_TEMPLATES
from mimesis import Address, Person, Text
from mimesis.locales import Locale

LOCALES = {
    "Chinese": (Locale.ZH,), "Japanese": (Locale.JA,), "Korean": (Locale.KO,),
    "Arabic": (Locale.AR_AE, Locale.AR_EG, Locale.AR_JO, Locale.AR_SY), "Persian": (Locale.FA,),
}  # fmt: skip


def name(language: str, person: Person) -> str:
    first, last = person.first_name(), person.last_name()
    if language in ("Chinese", "Korean"):
        return last + first
    if language == "Japanese":
        return f"{last} {first}"
    return f"{first} {last}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--count", type=int, default=300)
    args = parser.parse_args()
    detector = LocalPiiDetector()
    rng = random.Random(args.seed)

    def person_spans(text: str) -> list[tuple[int, int]]:
        return [(span.start, span.end) for span in detector.detect(text) if span.entity_type == "PERSON"]

    for language, locales in LOCALES.items():
        people = [Person(locale, seed=args.seed) for locale in locales]
        found = 0
        for _ in range(args.count):
            value = name(language, rng.choice(people))
            text = rng.choice(NAME_TEMPLATES).format(value)
            start = text.index(value)
            found += any(s < start + len(value) and start < e for s, e in person_spans(text))
        places = [Address(locale, seed=args.seed) for locale in locales]
        texts = [Text(locale, seed=args.seed) for locale in locales]
        cities = sum(bool(person_spans(rng.choice(NAME_TEMPLATES).format(rng.choice(places).city())))
                     for _ in range(args.count))
        words = sum(bool(person_spans(rng.choice(NAME_TEMPLATES).format(" ".join(rng.choice(texts).words(2)))))
                    for _ in range(args.count))
        print(f"{language:9s} names found {found}/{args.count} = {found / args.count:.3f}; PERSON on cities "
              f"{cities / args.count:.3f}, on two random words {words / args.count:.3f}")


if __name__ == "__main__":
    main()
