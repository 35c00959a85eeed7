"""How the phone rules do on numbers they were not developed on: Faker's phone formats of many locales.

    .venv/bin/python scripts/measure_phone_formats.py [--per-locale 40] [--seed 7]

pii-dev.json's phone numbers come from a few locales; this draws fresh ones from Faker's formats for
52 locales, each put in one of a few sentences (some with a phone word, some without), and counts how
many the detector finds (recall). It then draws numbers that are not phone numbers (postcodes,
national identity numbers, bank account numbers, licence plates, ISBNs, dates, amounts, addresses)
from 22 locales and counts how many are read as phone numbers (false positives). Faker is a dev
dependency; the numbers are made up. Prints the misses per locale; asserts nothing.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter, defaultdict
from collections.abc import Callable

from agentmem.adapters.local.pii_regex import PHONE_NUMBER, RegexPiiDetector
from faker import Faker

PHONE_LOCALES = (
    "en_US", "en_GB", "en_AU", "en_CA", "en_IE", "en_NZ", "en_IN", "de_DE", "de_AT", "de_CH", "fr_FR",
    "fr_CH", "fr_CA", "it_IT", "es_ES", "es_MX", "pt_PT", "pt_BR", "nl_NL", "nl_BE", "sv_SE", "fi_FI",
    "da_DK", "no_NO", "pl_PL", "cs_CZ", "sk_SK", "hu_HU", "ro_RO", "el_GR", "tr_TR", "ru_RU", "uk_UA",
    "ja_JP", "zh_CN", "ko_KR", "he_IL", "hr_HR", "sl_SI", "et_EE", "lv_LV", "lt_LT", "bg_BG", "id_ID",
    "th_TH", "vi_VN", "ar_EG", "fa_IR", "es_AR", "es_CO", "es_CL", "tw_GH",
)
OTHER_LOCALES = (
    "en_US", "en_GB", "en_AU", "de_DE", "fr_FR", "it_IT", "es_ES", "pt_BR", "nl_NL", "sv_SE", "fi_FI",
    "da_DK", "no_NO", "pl_PL", "cs_CZ", "hu_HU", "el_GR", "ja_JP", "he_IL", "et_EE", "sl_SI", "hr_HR",
)
SENTENCES = (
    "My phone number is {}.",
    "You can call me at {} tomorrow.",
    "{}",
    "Contact: {}\n",
    "I tried {} but nobody answered.",
    "The number {} keeps ringing.",
    "Hi, it's me, {} is my new number",
)
NOT_PHONES: dict[str, Callable[[Faker], str]] = {
    "postcode": lambda f: f.postcode(),
    "address": lambda f: f.address(),
    "national id": lambda f: f.ssn(),
    "bank account": lambda f: f.bban(),
    "licence plate": lambda f: f.license_plate(),
    "ISBN-10": lambda f: f.isbn10(),
    "ISBN-13": lambda f: f.isbn13(),
    "EAN-13": lambda f: f.ean13(),
    "date": lambda f: f.date(),
    "date and time": lambda f: str(f.date_time()),
    "amount": lambda f: f"{f.pydecimal(left_digits=7, right_digits=2, positive=True):,}",
    "passport": lambda f: f.passport_number(),
    "card expiry": lambda f: f.credit_card_expire(),
    "year range": lambda f: f"{f.year()}-{f.year()}",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-locale", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    detector = RegexPiiDetector()
    Faker.seed(args.seed)
    pick = random.Random(args.seed)

    def phones(text: str, start: int, end: int) -> list[str]:
        return [
            s.value for s in detector.detect(text) if s.entity_type == PHONE_NUMBER and s.start < end and start < s.end
        ]

    found = total = 0
    missed: dict[str, list[str]] = defaultdict(list)
    for locale in PHONE_LOCALES:
        fake = Faker(locale)
        for _ in range(args.per_locale):
            number = fake.phone_number()
            sentence = pick.choice(SENTENCES)
            start = sentence.index("{}")
            total += 1
            if phones(sentence.format(number), start, start + len(number)):
                found += 1
            else:
                missed[locale].append(number)
    print(f"phone numbers found: {found}/{total} = {found / total:.3f} ({len(PHONE_LOCALES)} locales)")
    for locale, numbers in missed.items():
        print(f"  missed {locale}: {len(numbers)}, e.g. {', '.join(numbers[:4])}")

    read_as_phone: Counter[str] = Counter()
    drawn: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    for locale in OTHER_LOCALES:
        fake = Faker(locale)
        for kind, draw in NOT_PHONES.items():
            for _ in range(15):
                try:
                    value = draw(fake)
                except (AttributeError, NotImplementedError):
                    break  # this locale has no such number
                drawn[kind] += 1
                text = f"Here it is: {value}. Thanks"
                if phones(text, 0, len(text)):
                    read_as_phone[kind] += 1
                    examples[kind].append(f"{locale} {value!r}")
    false_positives, others = sum(read_as_phone.values()), sum(drawn.values())
    print(f"other numbers read as phone numbers: {false_positives}/{others} = {false_positives / others:.3f}")
    for kind, count in read_as_phone.most_common():
        print(f"  {kind}: {count}/{drawn[kind]}, e.g. {', '.join(examples[kind][:3])}")


if __name__ == "__main__":
    main()
