"""Korean names written in Latin letters, given name first or last, in sentences.

    .venv/bin/python scripts/measure_korean_names.py [--seed 9] [--count 400]

Draws, with a fixed seed, mimesis's Korean given names of two syllables (in Hangul, names the detector's
lists never saw in Latin letters), romanises them by the Revised Romanization's letter table with the
syllables hyphenated ("서연" -> "Seo-yeon"), pairs each with one of twelve common surnames in their usual
spellings (Kim, Lee, Park...; the surname side is the rule's own list, so it measures the given names'
form), puts the name into one of eight sentences in either order, and prints the share found as PERSON.
Then two-syllable English compounds in the same place ("Follow-up Park", "Check-in Song"): the share
with a PERSON span. Asserts nothing.
"""

from __future__ import annotations

import argparse
import random

from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from mimesis import Person
from mimesis.locales import Locale

# The Revised Romanization's letters for a syllable's initial consonant, vowel and final consonant.
INITIALS = ("g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t", "p", "h")
VOWELS = ("a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae", "oe", "yo", "u", "wo", "we", "wi", "yu",
          "eu", "ui", "i")  # fmt: skip
FINALS = ("", "k", "k", "k", "n", "n", "n", "t", "l", "k", "m", "l", "l", "l", "p", "l", "m", "p", "p", "t", "t",
          "ng", "t", "t", "k", "t", "p", "t")  # fmt: skip
SURNAMES = ("Kim", "Lee", "Park", "Choi", "Jung", "Kang", "Cho", "Yoon", "Jang", "Lim", "Han", "Song")
SENTENCES = (
    "We hired {} last week.", "{} called about the lease.", "Please ring {} tomorrow.", "My landlord is {}.",
    "I had lunch with {} yesterday.", "The form was signed by {}.", "Can you send {} the invoice?",
    "{} and I split the bill.",
)  # fmt: skip
COMPOUNDS = ("Follow-up", "Check-in", "Sign-up", "Pop-up", "Set-up", "Drop-off", "Hand-off", "Log-in", "Make-up",
             "Co-op", "Re-do", "Walk-in")  # fmt: skip


def romanised(hangul: str) -> str:
    """A syllable block's letters: (code - 0xAC00) = (initial * 21 + vowel) * 28 + final."""
    syllables = []
    for char in hangul:
        code = ord(char) - 0xAC00
        if not 0 <= code < 11172:
            return ""
        syllables.append(INITIALS[code // 588] + VOWELS[code % 588 // 28] + FINALS[code % 28])
    return "-".join(syllables).capitalize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--count", type=int, default=400)
    args = parser.parse_args()
    detector = LocalPiiDetector()
    rng = random.Random(args.seed)
    person = Person(Locale.KO, seed=args.seed)
    found = tried = 0
    while tried < args.count:
        given = romanised(person.first_name())
        if given.count("-") != 1:
            continue
        tried += 1
        surname = rng.choice(SURNAMES)
        name = f"{given} {surname}" if rng.random() < 0.5 else f"{surname} {given}"
        text = rng.choice(SENTENCES).format(name)
        start = text.index(name)
        found += any(
            span.entity_type == "PERSON" and span.start <= start and start + len(name) <= span.end
            for span in detector.detect(text)
        )
    print(f"romanised Korean names (seed {args.seed}): masked whole {found}/{args.count} = {found / args.count:.3f}")
    alarms = 0
    for _ in range(args.count):
        thing = f"{rng.choice(COMPOUNDS)} {rng.choice(SURNAMES)}"
        alarms += any(span.entity_type == "PERSON" for span in detector.detect(rng.choice(SENTENCES).format(thing)))
    print(f"English compounds before a surname: PERSON on {alarms}/{args.count} = {alarms / args.count:.3f}")


if __name__ == "__main__":
    main()
