"""The vault's three contracts.

KeyStore: SqliteKeyStore and DynamoDbKeyStore (moto, a table of its own) behave alike.
VaultStore: SqliteVaultStore and DynamoDbVaultStore (moto) behave alike.
KeyProvider: the local key file and KMS (moto) behave alike.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from agentmem.domain.envelope import DecryptionFailed, encryption_context
from agentmem.domain.errors import BackendUnavailable
from agentmem.ports.vault import VaultEntry, WrappedDataKey

from tests.contract.conftest import KEY_TABLE_NAME, REGION, TABLE_NAME, create_key_table, create_table

T0 = 1_750_000_000.0


# VaultStore


@pytest.fixture(params=["sqlite", "dynamodb"])
def vault(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        from agentmem.adapters.local.vault_store import SqliteVaultStore

        store = SqliteVaultStore(tmp_path / "vault.db")
        yield store
        store.close()
    else:
        from agentmem.adapters.aws.dynamodb_vault import DynamoDbVaultStore

        request.getfixturevalue("moto")
        create_table()
        yield DynamoDbVaultStore(TABLE_NAME, sleep=lambda _: None)


# KeyStore


@pytest.fixture(params=["sqlite", "dynamodb"])
def key_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        from agentmem.adapters.local.key_store import SqliteKeyStore

        store = SqliteKeyStore(tmp_path / "keys.db")
        yield store
        store.close()
    else:
        from agentmem.adapters.aws.dynamodb_keys import DynamoDbKeyStore

        request.getfixturevalue("moto")
        create_key_table()
        yield DynamoDbKeyStore(KEY_TABLE_NAME, sleep=lambda _: None)


def data_key(user: str = "alice", *, tenant: str = "acme", wrapped: bytes = b"wrapped-1") -> WrappedDataKey:
    return WrappedDataKey(tenant=tenant, user_id=user, version=1, wrapped=wrapped, created_at=T0)


def entry(
    token: str, fingerprint: str, *, user: str = "alice", thread: str = "t1", tenant: str = "acme"
) -> VaultEntry:
    return VaultEntry(
        tenant=tenant, user_id=user, thread_id=thread, token=token, entity_type="EMAIL_ADDRESS",
        fingerprint=fingerprint, ciphertext=b"\x01ciphertext of " + token.encode(), key_version=1, created_at=T0,
    )


def test_a_user_without_a_key_has_none_and_a_stored_key_reads_back(key_store: Any) -> None:
    assert key_store.get_data_key("acme", "alice") is None
    assert key_store.add_data_key(data_key()) == data_key()
    assert key_store.get_data_key("acme", "alice") == data_key()


def test_the_first_key_stored_for_a_user_wins(key_store: Any) -> None:
    key_store.add_data_key(data_key(wrapped=b"first"))
    assert key_store.add_data_key(data_key(wrapped=b"second")).wrapped == b"first"
    assert key_store.get_data_key("acme", "alice").wrapped == b"first"


def test_a_wrapped_key_is_replaced_only_when_it_is_still_the_old_one(key_store: Any) -> None:
    key_store.add_data_key(data_key(wrapped=b"old"))
    assert key_store.replace_wrapped_key("acme", "alice", 1, b"stale", b"new") is False
    assert key_store.replace_wrapped_key("acme", "alice", 1, b"old", b"new") is True
    assert key_store.get_data_key("acme", "alice").wrapped == b"new"
    assert key_store.replace_wrapped_key("acme", "nobody", 1, b"old", b"new") is False


def test_data_keys_are_listed_per_tenant_or_per_user(key_store: Any) -> None:
    for user in ("alice", "bob"):
        key_store.add_data_key(data_key(user))
    key_store.add_data_key(data_key("alice", tenant="globex"))
    assert [k.user_id for k in key_store.iter_data_keys("acme")] == ["alice", "bob"]
    assert [k.user_id for k in key_store.iter_data_keys("acme", "bob")] == ["bob"]
    assert [k.tenant for k in key_store.iter_data_keys("globex")] == ["globex"]


def test_destroying_a_users_keys_leaves_everyone_elses(key_store: Any) -> None:
    key_store.add_data_key(data_key("alice"))
    key_store.add_data_key(data_key("bob"))
    key_store.add_data_key(data_key("alice", tenant="globex"))
    key_store.destroy_data_keys("acme", "alice")
    key_store.destroy_data_keys("acme", "alice")
    assert key_store.get_data_key("acme", "alice") is None
    assert key_store.get_data_key("acme", "bob") is not None
    assert key_store.get_data_key("globex", "alice") is not None
    assert [k.user_id for k in key_store.iter_data_keys("acme")] == ["bob"]


def test_a_destroyed_key_leaves_no_byte_of_it_in_the_sqlite_files_wal_included(tmp_path: Path) -> None:
    from agentmem.adapters.local.key_store import SqliteKeyStore

    store = SqliteKeyStore(tmp_path / "keys.db")
    secret = os.urandom(48)
    store.add_data_key(data_key(wrapped=secret))
    store.add_data_key(data_key("bob", wrapped=b"bob's wrapped key"))
    store.destroy_data_keys("acme", "alice")
    files = sorted(tmp_path.glob("keys.db*"))
    assert any(f.name == "keys.db-wal" for f in files)  # the connection is open: WAL mode
    assert all(secret not in f.read_bytes() for f in files)
    assert store.get_data_key("acme", "bob") is not None
    store.close()


def test_keys_left_in_a_vault_file_from_before_move_to_the_key_store_and_leave_it(tmp_path: Path) -> None:
    import sqlite3

    from agentmem.adapters.local.key_store import SqliteKeyStore

    legacy = sqlite3.connect(tmp_path / "vault.db")
    legacy.executescript(
        "CREATE TABLE data_keys (tenant TEXT NOT NULL, user_id TEXT NOT NULL, version INTEGER NOT NULL,"
        " wrapped BLOB NOT NULL, created_at REAL NOT NULL, PRIMARY KEY (tenant, user_id, version));"
    )
    secret = os.urandom(48)
    legacy.execute("INSERT INTO data_keys VALUES ('acme', 'alice', 1, ?, ?)", (secret, T0))
    legacy.commit()
    legacy.close()
    store = SqliteKeyStore(tmp_path / "keys.db")

    assert store.import_legacy_keys(tmp_path / "vault.db") == 1
    assert store.import_legacy_keys(tmp_path / "vault.db") == 0
    assert store.get_data_key("acme", "alice") == data_key(wrapped=secret)
    assert all(secret not in f.read_bytes() for f in tmp_path.glob("vault.db*"))
    store.close()


def test_counters_are_handed_out_once_per_thread(vault: Any) -> None:
    assert vault.allocate_counters("acme", "alice", "t1", 2) == [1, 2]
    assert vault.allocate_counters("acme", "alice", "t1", 3) == [3, 4, 5]
    assert vault.allocate_counters("acme", "alice", "t2", 1) == [1]
    assert vault.allocate_counters("acme", "bob", "t1", 1) == [1]
    assert vault.allocate_counters("acme", "alice", "t1", 0) == []


def test_an_entry_reads_back_by_token_and_by_fingerprint(vault: Any) -> None:
    assert vault.add_entry(entry("{{PII_EMAIL_aaaaaaaa_1}}", "fp1")) == "{{PII_EMAIL_aaaaaaaa_1}}"
    assert vault.get_entries("acme", "alice", ["{{PII_EMAIL_aaaaaaaa_1}}"]) == [
        entry("{{PII_EMAIL_aaaaaaaa_1}}", "fp1")
    ]
    assert vault.tokens_for_fingerprints("acme", "alice", "t1", ["fp1", "fp-unknown"]) == {
        "fp1": "{{PII_EMAIL_aaaaaaaa_1}}"
    }
    assert vault.tokens_for_fingerprints("acme", "alice", "t2", ["fp1"]) == {}


def test_the_same_value_added_twice_in_a_thread_keeps_the_first_token(vault: Any) -> None:
    vault.add_entry(entry("{{PII_EMAIL_aaaaaaaa_1}}", "fp1"))
    assert vault.add_entry(entry("{{PII_EMAIL_aaaaaaaa_2}}", "fp1")) == "{{PII_EMAIL_aaaaaaaa_1}}"
    assert vault.get_entries("acme", "alice", ["{{PII_EMAIL_aaaaaaaa_2}}"]) == []
    # The same value in another thread is another entry.
    assert vault.add_entry(entry("{{PII_EMAIL_bbbbbbbb_1}}", "fp1", thread="t2")) == "{{PII_EMAIL_bbbbbbbb_1}}"


def test_another_users_tokens_are_not_found(vault: Any) -> None:
    vault.add_entry(entry("{{PII_EMAIL_aaaaaaaa_1}}", "fp1", user="alice"))
    vault.add_entry(entry("{{PII_EMAIL_cccccccc_1}}", "fp1", user="bob"))
    vault.add_entry(entry("{{PII_EMAIL_dddddddd_1}}", "fp1", tenant="globex"))
    tokens = ["{{PII_EMAIL_aaaaaaaa_1}}", "{{PII_EMAIL_cccccccc_1}}", "{{PII_EMAIL_dddddddd_1}}"]
    assert [e.token for e in vault.get_entries("acme", "alice", tokens)] == ["{{PII_EMAIL_aaaaaaaa_1}}"]
    assert vault.tokens_for_fingerprints("acme", "carol", "t1", ["fp1"]) == {}


def test_deleting_a_user_removes_entries_and_counters_and_nothing_else(vault: Any) -> None:
    vault.allocate_counters("acme", "alice", "t1", 4)
    vault.add_entry(entry("{{PII_EMAIL_aaaaaaaa_1}}", "fp1"))
    vault.add_entry(entry("{{PII_EMAIL_cccccccc_1}}", "fp1", user="bob"))

    vault.delete_user("acme", "alice")
    vault.delete_user("acme", "alice")

    assert vault.get_entries("acme", "alice", ["{{PII_EMAIL_aaaaaaaa_1}}"]) == []
    assert vault.tokens_for_fingerprints("acme", "alice", "t1", ["fp1"]) == {}
    assert vault.allocate_counters("acme", "alice", "t1", 1) == [1]
    assert len(vault.get_entries("acme", "bob", ["{{PII_EMAIL_cccccccc_1}}"])) == 1


def test_lookups_of_many_tokens_and_fingerprints_are_complete(vault: Any) -> None:
    tokens = [f"{{{{PII_EMAIL_aaaaaaaa_{n}}}}}" for n in range(1, 102)]
    for n, token in enumerate(tokens):
        vault.add_entry(entry(token, f"fp{n}"))
    assert len(vault.get_entries("acme", "alice", tokens)) == 101
    assert len(vault.tokens_for_fingerprints("acme", "alice", "t1", [f"fp{n}" for n in range(101)])) == 101


def test_the_last_counter_follows_every_allocation_of_its_scope_only(vault: Any) -> None:
    assert vault.last_counter("acme", "alice", "*") == 0
    vault.allocate_counters("acme", "alice", "*", 3)
    vault.allocate_counters("acme", "alice", "t1", 7)
    vault.allocate_counters("acme", "bob", "*", 5)
    assert vault.last_counter("acme", "alice", "*") == 3
    vault.allocate_counters("acme", "alice", "*", 2)
    assert vault.last_counter("acme", "alice", "*") == 5
    vault.delete_user("acme", "alice")
    assert vault.last_counter("acme", "alice", "*") == 0
    assert vault.last_counter("acme", "bob", "*") == 5


def test_the_value_index_lists_a_scopes_fingerprints_and_no_one_elses(vault: Any) -> None:
    assert vault.value_index("acme", "alice", "*") == {}
    for n in range(1, 4):
        vault.add_entry(entry(f"{{{{PII_PERSON_aaaaaaaa_{n}}}}}", f"fp{n}", thread="*"))
    vault.add_entry(entry("{{PII_PERSON_aaaaaaaa_9}}", "fp9", thread="t1"))
    vault.add_entry(entry("{{PII_PERSON_aaaaaaaa_8}}", "fp8", thread="*#old"))
    vault.add_entry(entry("{{PII_PERSON_cccccccc_1}}", "fp-bob", user="bob", thread="*"))
    vault.add_entry(entry("{{PII_PERSON_dddddddd_1}}", "fp-globex", tenant="globex", thread="*"))
    assert vault.value_index("acme", "alice", "*") == {
        f"fp{n}": f"{{{{PII_PERSON_aaaaaaaa_{n}}}}}" for n in range(1, 4)
    }
    vault.delete_user("acme", "alice")
    assert vault.value_index("acme", "alice", "*") == {}
    assert vault.value_index("acme", "bob", "*") == {"fp-bob": "{{PII_PERSON_cccccccc_1}}"}


# KeyProvider


@pytest.fixture(params=["key-file", "kms"])
def keys(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "key-file":
        from agentmem.adapters.local.key_file import LocalKeyFile

        return LocalKeyFile(tmp_path / "vault.key")
    from agentmem.adapters.aws.kms_keys import KmsKeyProvider

    request.getfixturevalue("moto")
    kms = boto3.client("kms", region_name=REGION)
    key_arn = kms.create_key(Description="tenant data key")["KeyMetadata"]["Arn"]
    hmac_arn = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")["KeyMetadata"]["Arn"]
    return KmsKeyProvider(key_arn, hmac_arn)


ALICE = encryption_context("acme", "alice")


def test_a_generated_key_is_aes_256_and_unwraps_to_itself(keys: Any) -> None:
    generated = keys.generate_data_key(ALICE)
    assert len(generated.plaintext) == 32
    assert generated.plaintext not in generated.wrapped
    assert keys.unwrap(generated.wrapped, ALICE) == generated.plaintext
    assert keys.generate_data_key(ALICE).plaintext != generated.plaintext


def test_a_wrapped_key_does_not_unwrap_for_another_user_or_tenant(keys: Any) -> None:
    generated = keys.generate_data_key(ALICE)
    for other in (encryption_context("acme", "bob"), encryption_context("globex", "alice")):
        with pytest.raises(DecryptionFailed):
            keys.unwrap(generated.wrapped, other)


def test_rewrapping_keeps_the_data_key(keys: Any) -> None:
    generated = keys.generate_data_key(ALICE)
    rewrapped = keys.rewrap(generated.wrapped, ALICE)
    assert keys.unwrap(rewrapped, ALICE) == generated.plaintext
    with pytest.raises(DecryptionFailed):
        keys.rewrap(generated.wrapped, encryption_context("acme", "bob"))


def test_thread_hashes_are_stable_eight_hex_characters_per_thread(keys: Any) -> None:
    first = keys.thread_hash("acme", "alice", "t1")
    assert re.fullmatch(r"[0-9a-f]{8}", first)
    assert keys.thread_hash("acme", "alice", "t1") == first
    others = {keys.thread_hash(*ids) for ids in (("acme", "alice", "t2"), ("acme", "bob", "t1"),
                                                  ("globex", "alice", "t1"))}
    assert first not in others and len(others) == 3


def test_the_key_file_is_created_owner_only_and_shared_by_every_handle(tmp_path: Path) -> None:
    from agentmem.adapters.local.key_file import LocalKeyFile

    path = tmp_path / "data" / "vault.key"
    one, two = LocalKeyFile(path), LocalKeyFile(path)
    wrapped = one.generate_data_key(ALICE).wrapped
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert two.unwrap(wrapped, ALICE) == one.unwrap(wrapped, ALICE)
    assert two.thread_hash("acme", "alice", "t1") == one.thread_hash("acme", "alice", "t1")
    assert [p.name for p in path.parent.iterdir()] == ["vault.key"]  # no temporary file left behind


def test_a_key_file_others_can_read_is_refused(tmp_path: Path) -> None:
    from agentmem.adapters.local.key_file import LocalKeyFile

    path = tmp_path / "vault.key"
    LocalKeyFile(path).thread_hash("acme", "alice", "t1")
    os.chmod(path, 0o644)
    with pytest.raises(BackendUnavailable) as raised:
        LocalKeyFile(path).thread_hash("acme", "alice", "t1")
    assert "chmod 600" in raised.value.message


def test_after_a_kek_rotation_old_wraps_still_unwrap_and_rewraps_use_the_new_kek(tmp_path: Path) -> None:
    from agentmem.adapters.local.key_file import LocalKeyFile

    key_file = LocalKeyFile(tmp_path / "vault.key")
    generated = key_file.generate_data_key(ALICE)
    old_kek = LocalKeyFile.kek_id_of(generated.wrapped)
    new_kek = key_file.rotate()
    reopened = LocalKeyFile(tmp_path / "vault.key")
    assert reopened.unwrap(generated.wrapped, ALICE) == generated.plaintext
    rewrapped = reopened.rewrap(generated.wrapped, ALICE)
    assert LocalKeyFile.kek_id_of(rewrapped) == new_kek != old_kek
    assert stat.S_IMODE((tmp_path / "vault.key").stat().st_mode) == 0o600


@pytest.mark.usefixtures("moto")
def test_kms_without_an_hmac_key_cannot_make_tokens() -> None:
    from agentmem.adapters.aws.kms_keys import KmsKeyProvider

    key_arn = boto3.client("kms", region_name=REGION).create_key()["KeyMetadata"]["Arn"]
    with pytest.raises(BackendUnavailable) as raised:
        KmsKeyProvider(key_arn, None).thread_hash("acme", "alice", "t1")
    assert "AGENTMEM_HMAC_KEY_ARN" in raised.value.message


@pytest.mark.usefixtures("moto")
def test_kms_refuses_a_key_wrapped_under_another_tenants_kms_key() -> None:
    from agentmem.adapters.aws.kms_keys import KmsKeyProvider

    kms = boto3.client("kms", region_name=REGION)
    hmac_arn = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")["KeyMetadata"]["Arn"]
    acme = KmsKeyProvider(kms.create_key()["KeyMetadata"]["Arn"], hmac_arn)
    globex = KmsKeyProvider(kms.create_key()["KeyMetadata"]["Arn"], hmac_arn)
    wrapped = acme.generate_data_key(ALICE).wrapped
    # KMS answers IncorrectKeyException (a DecryptionFailed); moto answers AccessDeniedException.
    with pytest.raises((DecryptionFailed, BackendUnavailable)):
        globex.unwrap(wrapped, ALICE)
