"""Personal values made up at test time, so none of them can be in any file of the project, and a
search of the data folder for the raw bytes (WAL included) that finds one found a leak."""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from pathlib import Path

from agentmem.domain.personal_numbers import is_international_phone, luhn_valid


@dataclass(frozen=True)
class MadeUpPerson:
    email: str
    card: int  # a Mastercard number: 16 digits, Luhn-valid
    phone: int  # a Vietnamese mobile as a JSON number would hold it: +84 9x xxx xxxx without the "+"
    phone_text: str  # a UK mobile as a person writes it: +44 7xxx xxxxxx


def made_up_person(seed: int | None = None) -> MadeUpPerson:
    rng = random.Random(seed)
    local = "".join(rng.choices(string.ascii_lowercase, k=9))
    domain = "".join(rng.choices(string.ascii_lowercase, k=8))
    return MadeUpPerson(
        email=f"{local}.{rng.randint(100, 999)}@{domain}.example.org",
        card=_card(rng),
        phone=_phone(rng),
        phone_text="+44 7700 9" + "".join(rng.choices(string.digits, k=5)),
    )


def raw_values(person: MadeUpPerson) -> list[bytes]:
    return [person.email.encode(), str(person.card).encode(), str(person.phone).encode(),
            person.phone_text.encode(), person.phone_text.replace(" ", "").encode()]


def files_holding(data_dir: Path, needles: list[bytes]) -> dict[str, list[bytes]]:
    """Every file under `data_dir` (any name: databases, `-wal`, `-shm`, keys) that holds one of `needles`."""
    found: dict[str, list[bytes]] = {}
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()):
        content = path.read_bytes()
        hits = [needle for needle in needles if needle in content]
        if hits:
            found[str(path.relative_to(data_dir))] = hits
    return found


def _card(rng: random.Random) -> int:
    while True:
        digits = str(rng.randint(51, 55)) + "".join(rng.choices(string.digits, k=14))
        if luhn_valid(digits):
            return int(digits)


def _phone(rng: random.Random) -> int:
    while True:
        digits = "849" + "".join(rng.choices(string.digits, k=8))
        if is_international_phone(digits):
            return int(digits)
