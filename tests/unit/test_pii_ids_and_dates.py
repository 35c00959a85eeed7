"""National ids, passports, postcodes of their own shape, dates of birth, and numbers that are no phone
(issue 20). Every value here is made up for this file; the check characters are python-stdnum's."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.pii_regex import RegexPiiDetector
from agentmem.adapters.local.presidio_pii import LocalPiiDetector, PresidioPiiDetector


@pytest.fixture(scope="module")
def detector() -> LocalPiiDetector:
    return LocalPiiDetector()


def found(detector: object, text: str) -> set[tuple[str, str]]:
    return {(span.entity_type, span.value) for span in detector.detect(text)}  # type: ignore[attr-defined]


def test_an_irish_pps_number_is_found_alone_and_a_wrong_check_letter_is_not() -> None:
    regex = RegexPiiDetector()
    assert found(regex, "the revenue letter quotes 5271938A") == {("NATIONAL_ID", "5271938A")}
    assert found(regex, "since 2013 it reads 5271938JA") == {("NATIONAL_ID", "5271938JA")}
    assert found(regex, "the revenue letter quotes 5271938B") == set()


def test_an_all_digit_national_id_needs_a_word_that_names_it() -> None:
    regex = RegexPiiDetector()
    assert found(regex, "My PESEL is 88031402710.") == {("NATIONAL_ID", "88031402710")}
    # Eleven digits with one check digit pass for one random number in ten: alone it is no id.
    assert ("NATIONAL_ID", "88031402710") not in found(regex, "Order 88031402710 shipped.")


def test_a_codice_fiscale_is_found_by_its_check_character() -> None:
    assert found(RegexPiiDetector(), "codice RSSMRA77L09H501X ok") == {("NATIONAL_ID", "RSSMRA77L09H501X")}
    assert found(RegexPiiDetector(), "codice RSSMRA77L09H501Y ok") == set()


def test_a_passport_number_is_found_after_the_word_passport_only() -> None:
    regex = RegexPiiDetector()
    assert found(regex, "My passport number is PX4417092.") == {("PASSPORT", "PX4417092")}
    assert found(regex, "Passport no. 550183627, expires soon") == {("PASSPORT", "550183627")}
    assert found(regex, "The build PX4417092 failed.") == set()


@pytest.mark.parametrize("code", ["T23 KX8P", "D6W R2F4", "EH12 9QT", "H3Z 2Y7"])
def test_eircodes_and_uk_and_canadian_postcodes_are_found_by_their_shape(
    detector: LocalPiiDetector, code: str
) -> None:
    assert found(detector, f"it's in {code}, near the station") == {("ZIP_CODE", code)}


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("I was born on the 23rd of November 1979 in a village.", "the 23rd of November 1979"),
        ("DOB: 23/11/1979", "23/11/1979"),
        ("her date of birth is 1979-11-23, please update it", "1979-11-23"),
        ("my birthday is 23 November so book a table", "23 November"),
        ("Born November 23, 1979, allergic to nuts.", "November 23, 1979"),
        # a written month with a year of two digits
        ("dob 23 Nov 79", "23 Nov 79"),
        ("Born November 23, '79, allergic to nuts.", "November 23, '79"),
        # a month and a year without the day
        ("I was born in November 1979, on the 23rd.", "November 1979"),
        ("DOB: 11/1979", "11/1979"),
    ],
)
def test_a_date_next_to_a_birth_word_is_a_date_of_birth(detector: LocalPiiDetector, text: str, date: str) -> None:
    assert ("DATE_TIME", date) in found(detector, text)


def test_other_dates_stay_and_dates_of_birth_can_be_turned_off(detector: LocalPiiDetector) -> None:
    assert found(detector, "The invoice of 23/11/1979 was paid on 1979-12-01.") == set()
    assert found(detector, "He was born on 3 May 12 weeks early.") == set()  # a count, not a year
    assert found(detector, "The firm was founded in November 1979.") == set()
    assert found(PresidioPiiDetector(dates_of_birth=False), "DOB: 23/11/1979") == set()


@pytest.mark.parametrize("number", ["1431149752", "7661 7764 3166", "758-5946-142234"])
def test_digit_runs_that_cannot_be_dialled_are_no_phone_number(number: str) -> None:
    assert RegexPiiDetector().detect(f"row {number} in the export is empty") == []


@pytest.mark.parametrize("number", ["2125550188", "0612345678", "419 88 865", "0662 83019 447", "0512 43676 383"])
def test_dialable_numbers_are_still_phone_numbers(number: str) -> None:
    assert found(RegexPiiDetector(), f"text {number} when you land") == {("PHONE_NUMBER", number)}


def test_a_named_identity_number_that_also_passes_a_cards_check_is_an_identity_number() -> None:
    # A valid Romanian CNP that also passes Luhn with a Maestro prefix (56-69, 12-19 digits).
    number = "5030917010201"
    assert found(RegexPiiDetector(), f"card {number}") == {("CREDIT_CARD", number)}
    assert found(RegexPiiDetector(), f"my personal identity number: {number}") == {("NATIONAL_ID", number)}


def test_an_aadhaar_number_needs_its_name_and_its_verhoeff_check() -> None:
    regex = RegexPiiDetector()
    assert found(regex, "my Aadhaar is 8059 7999 8169") == {("NATIONAL_ID", "8059 7999 8169")}
    assert found(regex, "my Aadhaar is 8059 7999 8160") == set()  # the check digit is wrong
    assert not any(kind == "NATIONAL_ID" for kind, _ in found(regex, "invoice 8059 7999 8169"))


@pytest.mark.parametrize(
    ("cue", "number"),
    [
        ("her ID number is", "8712243195072"),  # South Africa: a birth date and Luhn
        ("meine Steuer-ID:", "52 738 704 918"),  # Germany's IdNr
        ("rijksregisternummer", "69.08.06-544.05"),  # Belgium
        ("EGN", "5512221900"),  # Bulgaria
        ("kennitala", "210574-0189"),  # Iceland
        ("AMKA", "05017337386"),  # Greece
        ("NRIC", "700502-14-6344"),  # Malaysia
        ("national ID", "3171010804983586"),  # Indonesia's NIK
        ("EMŠO", "2101987502817"),  # Slovenia
        ("asmens kodas", "38204064674"),  # Lithuania
    ],
)
def test_identity_numbers_with_a_birth_date_or_a_structure_are_found_after_any_identity_word(
    cue: str, number: str
) -> None:
    assert found(RegexPiiDetector(), f"Please note {cue} {number} for the file.") == {("NATIONAL_ID", number)}


@pytest.mark.parametrize(
    ("name", "number"),
    [
        ("teudat zehut", "848893418"),  # Israel
        ("TFN", "420 267 471"),  # Australia
        ("IRD number", "084-164-666"),  # New Zealand
        ("RUT", "80.494.838-4"),  # Chile
        ("ITIN", "973-74-6334"),  # the US
        ("CNIC", "38266-8642653-4"),  # Pakistan: no check digit at all
        ("individual number", "4903 5675 4902"),  # Japan's My Number
        ("cédula", "808-8972171-0"),  # the Dominican Republic
        ("SVNR", "1758050364"),  # Austria
    ],
)
def test_short_identity_numbers_need_their_own_name(name: str, number: str) -> None:
    regex = RegexPiiDetector()
    assert found(regex, f"my {name} is {number}") == {("NATIONAL_ID", number)}
    # One check digit passes about one random number in ten: after a bare "id" it is as likely a ticket.
    assert ("NATIONAL_ID", number) not in found(regex, f"the id {number}")


def test_a_curp_is_found_alone_by_its_birth_date_and_check_digit() -> None:
    assert found(RegexPiiDetector(), "ver UHMM790521HDFCQF02 hoy") == {("NATIONAL_ID", "UHMM790521HDFCQF02")}
    assert found(RegexPiiDetector(), "ver UHMM790521HDFCQF03 hoy") == set()


@pytest.mark.parametrize("thing", ["order id", "Ticket ID", "customer ID:", "transaction id"])
def test_the_id_of_a_thing_names_no_identity_number(thing: str) -> None:
    # 88031402710 is a valid PESEL: after "my ID" it is one, after a thing's id it is that thing's number.
    assert found(RegexPiiDetector(), "my ID is 88031402710") == {("NATIONAL_ID", "88031402710")}
    assert ("NATIONAL_ID", "88031402710") not in found(RegexPiiDetector(), f"the {thing} 88031402710 was sent")


def test_a_national_insurance_number_is_found_after_its_name_only() -> None:
    regex = RegexPiiDetector()
    assert found(regex, "NI number: JR 48 21 07 B") == {("NATIONAL_ID", "JR 48 21 07 B")}
    assert found(regex, "my national insurance number is JR482107B") == {("NATIONAL_ID", "JR482107B")}
    assert found(regex, "order JR482107B shipped") == set()
    assert found(regex, "NI number: QQ 48 21 07 B") == set()  # a prefix HMRC never issues
