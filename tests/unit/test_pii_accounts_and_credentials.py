"""Bank accounts, routing codes, driving licences and credentials, each found after the words that name it,
and the everyday sentences with those words that hold none. Every value here is made up for this file
(the routing numbers pass python-stdnum's ABA check; the AWS keys are AWS's documentation examples)."""

from __future__ import annotations

import pytest
from agentmem.adapters.local.pii_regex import RegexPiiDetector

NAMED_TYPES = {
    "US_BANK_NUMBER", "ABA_ROUTING_NUMBER", "US_DRIVER_LICENSE", "PASSWORD", "PIN", "USERNAME", "AWS_ACCESS_KEY",
    "AWS_SECRET_KEY",
}  # fmt: skip


def found(text: str) -> set[tuple[str, str]]:
    return {(span.entity_type, span.value) for span in RegexPiiDetector().detect(text)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My account is sort code 20-45-77, account number 41927365.",
         {("ABA_ROUTING_NUMBER", "20-45-77"), ("US_BANK_NUMBER", "41927365")}),
        ("Wire it to routing number 021000021, account 4417 9283 1102.",
         {("ABA_ROUTING_NUMBER", "021000021"), ("US_BANK_NUMBER", "4417 9283 1102")}),
        ("BSB 062-000 account 1234 5678.", {("ABA_ROUTING_NUMBER", "062-000"), ("US_BANK_NUMBER", "1234 5678")}),
        ("acct no. 004417928 at the branch", {("US_BANK_NUMBER", "004417928")}),
        ("A/C 55012277 please", {("US_BANK_NUMBER", "55012277")}),
    ],
)
def test_bank_accounts_and_routing_codes_after_their_names(text: str, expected: set[tuple[str, str]]) -> None:
    assert found(text) == expected


def test_a_routing_number_must_pass_the_aba_check() -> None:
    assert found("routing number 021000022") == set()


@pytest.mark.parametrize(
    ("text", "licence"),
    [
        ("My driver's licence number is SMITH753116JD9AB.", "SMITH753116JD9AB"),
        ("California DL D4417921, expires 2029.", "D4417921"),
        ("Driver's License: S530-4417-9021", "S530-4417-9021"),
        # Shaped like a phone number, but named as a licence: it is masked as one, not as a phone.
        ("my driver's license number is 2270-66-1551", "2270-66-1551"),
    ],
)
def test_a_driving_licence_number_after_its_name(text: str, licence: str) -> None:
    assert found(text) == {("US_DRIVER_LICENSE", licence)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Login: kmensah / password Hunter2!Sunrise", {("USERNAME", "kmensah"), ("PASSWORD", "Hunter2!Sunrise")}),
        ("my password is correcthorsebatterystaple", {("PASSWORD", "correcthorsebatterystaple")}),
        ("pwd=Tr0ub4dor&3", {("PASSWORD", "Tr0ub4dor&3")}),
        ("resets go through Ivy (pw: Kettle!88).", {("PASSWORD", "Kettle!88")}),
        ("passphrase: blue-otter-42-maple", {("PASSWORD", "blue-otter-42-maple")}),
        ("The PIN is 4821, do not share it.", {("PIN", "4821")}),
        ("my pin is 0937", {("PIN", "0937")}),
        ("username: sara_k92", {("USERNAME", "sara_k92")}),
        ("My login is amara.okoye, as before.", {("USERNAME", "amara.okoye")}),
        ("My AWS key is AKIAIOSFODNN7EXAMPLE and secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         {("AWS_ACCESS_KEY", "AKIAIOSFODNN7EXAMPLE"), ("AWS_SECRET_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")}),
    ],
)
def test_credentials_after_their_names(text: str, expected: set[tuple[str, str]]) -> None:
    assert found(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I forgot my password again, so I clicked the password reset link.",
        "The password is too short and the password is required.",
        "Enter your PIN at the terminal; PIN 2 on the board is ground.",
        "The login is broken since the 3.2 update.",
        "Sorry, that username is taken; the user name is unique per tenant.",
        "The day pass is valid until 6pm; my boarding pass is on my phone.",
        "password = None in the config",
        "Our checking account balance is 2500 dollars.",
        "The account is 15 years old.",
        "Packets are routing through 3 hubs.",
        "We trained the DL model for 120000 steps.",
        "My driver's license expires in 2027.",
        "the secret sauce recipe has 12 ingredients",
    ],
)
def test_sentences_that_only_mention_a_credential_or_an_account_hold_none(text: str) -> None:
    assert not {kind for kind, _ in found(text)} & NAMED_TYPES


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The laptop's MAC is 3C:22:FB:9A:41:07.", ("MAC_ADDRESS", "3C:22:FB:9A:41:07")),
        ("switch port 3c22.fb9a.4107 is hers", ("MAC_ADDRESS", "3c22.fb9a.4107")),
        ("Send BTC to bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh please.",
         ("CRYPTO", "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh")),
        ("or to 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", ("CRYPTO", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2")),
    ],
)
def test_mac_and_bitcoin_addresses_are_found_alone(text: str, expected: tuple[str, str]) -> None:
    assert found(text) == {expected}


@pytest.mark.parametrize(
    "text",
    ["at 12:30:45:10:20:30 sharp", "release v2024.1105.1230", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3 (a checksum off)"],
)
def test_times_versions_and_a_bad_checksum_are_no_mac_or_wallet(text: str) -> None:
    assert not {kind for kind, _ in found(text)} & {"MAC_ADDRESS", "CRYPTO"}
