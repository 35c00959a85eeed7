"""Envelope encryption: AES-256-GCM blobs bound to their token and key, wrapped keys, the key cache."""

from __future__ import annotations

import os

import pytest
from agentmem.domain.envelope import (
    DataKey,
    DataKeyCache,
    DecryptionFailed,
    decrypt_value,
    encrypt_value,
    encryption_context,
    unwrap_data_key,
    value_fingerprint,
    wrap_data_key,
)

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
TOKEN = "{{PII_EMAIL_3f9a1c2b_1}}"


def test_a_value_decrypts_with_its_key_and_token() -> None:
    blob = encrypt_value(KEY, TOKEN, "jane.doe@example.com")
    assert decrypt_value(KEY, TOKEN, blob) == "jane.doe@example.com"


def test_the_ciphertext_holds_no_plaintext_and_differs_each_time() -> None:
    first, second = encrypt_value(KEY, TOKEN, "jane.doe@example.com"), encrypt_value(KEY, TOKEN, "jane.doe@example.com")
    assert b"jane.doe" not in first
    assert first != second  # a fresh nonce every time


def test_a_ciphertext_moved_to_another_token_does_not_decrypt() -> None:
    blob = encrypt_value(KEY, TOKEN, "jane.doe@example.com")
    with pytest.raises(DecryptionFailed):
        decrypt_value(KEY, "{{PII_EMAIL_3f9a1c2b_2}}", blob)


def test_another_key_or_a_flipped_bit_does_not_decrypt() -> None:
    blob = encrypt_value(KEY, TOKEN, "4111 1111 1111 1111")
    with pytest.raises(DecryptionFailed):
        decrypt_value(OTHER_KEY, TOKEN, blob)
    tampered = bytearray(blob)
    tampered[-1] ^= 1
    with pytest.raises(DecryptionFailed):
        decrypt_value(KEY, TOKEN, bytes(tampered))
    with pytest.raises(DecryptionFailed):
        decrypt_value(KEY, TOKEN, b"\x02" + blob[1:])  # an unknown format version


def test_a_key_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError):
        encrypt_value(b"short", TOKEN, "x")


def test_a_wrapped_data_key_unwraps_only_with_its_context() -> None:
    data_key = os.urandom(32)
    wrapped = wrap_data_key(KEY, data_key, encryption_context("acme", "alice"))
    assert data_key not in wrapped
    assert unwrap_data_key(KEY, wrapped, {"userId": "alice", "tenant": "acme"}) == data_key  # order-free
    with pytest.raises(DecryptionFailed):
        unwrap_data_key(KEY, wrapped, encryption_context("acme", "bob"))
    with pytest.raises(DecryptionFailed):
        unwrap_data_key(KEY, wrapped, encryption_context("globex", "alice"))


def test_fingerprints_depend_on_key_thread_and_value() -> None:
    base = value_fingerprint(KEY, "t1", "jane.doe@example.com")
    assert base == value_fingerprint(KEY, "t1", "jane.doe@example.com")
    assert base != value_fingerprint(OTHER_KEY, "t1", "jane.doe@example.com")
    assert base != value_fingerprint(KEY, "t2", "jane.doe@example.com")
    assert base != value_fingerprint(KEY, "t1", "john@example.com")
    # The separator keeps (thread, value) pairs apart that concatenate alike.
    assert value_fingerprint(KEY, "t1", "2x") != value_fingerprint(KEY, "t12", "x")
    assert "jane" not in base


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _key(n: int) -> DataKey:
    return DataKey(version=1, wrapped=bytes([n]), plaintext=bytes([n]) * 32)


def test_the_cache_serves_a_key_until_its_ttl_passes() -> None:
    clock = FakeClock()
    cache = DataKeyCache(ttl_seconds=300, clock=clock)
    cache.put("acme", "alice", _key(1))
    clock.now += 299
    assert cache.get("acme", "alice") == _key(1)
    clock.now += 2
    assert cache.get("acme", "alice") is None
    assert len(cache) == 0


def test_the_cache_is_bounded_and_evicts_the_least_recently_used() -> None:
    cache = DataKeyCache(ttl_seconds=300, max_entries=2, clock=FakeClock())
    cache.put("acme", "a", _key(1))
    cache.put("acme", "b", _key(2))
    assert cache.get("acme", "a") is not None  # a is now the most recently used
    cache.put("acme", "c", _key(3))
    assert cache.get("acme", "b") is None
    assert cache.get("acme", "a") == _key(1) and cache.get("acme", "c") == _key(3)


def test_forgetting_a_user_drops_only_their_key_and_tenants_are_apart() -> None:
    cache = DataKeyCache(clock=FakeClock())
    cache.put("acme", "alice", _key(1))
    cache.put("globex", "alice", _key(2))
    cache.forget("acme", "alice")
    assert cache.get("acme", "alice") is None
    assert cache.get("globex", "alice") == _key(2)


def test_a_zero_ttl_cache_keeps_nothing() -> None:
    cache = DataKeyCache(ttl_seconds=0, clock=FakeClock())
    cache.put("acme", "alice", _key(1))
    assert cache.get("acme", "alice") is None


def test_a_fingerprinter_gives_value_fingerprint_for_every_value() -> None:
    from agentmem.domain.envelope import value_fingerprinter

    fingerprint = value_fingerprinter(KEY, "*")
    for value in ("Caroline", "jane.doe@example.com", "", "Zoë"):
        assert fingerprint(value) == value_fingerprint(KEY, "*", value)
