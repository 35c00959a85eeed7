"""KeyProvider on AWS KMS: per-user data keys under the tenant's key, thread hashes with its HMAC key.

- `GenerateDataKey` (AES_256) with the encryption context `{"tenant", "userId"}`: KMS binds the
  wrapped key to that context, so a wrapped key copied to another user's record does not decrypt.
- `Decrypt` names the key id as well as the context, so a blob wrapped under a foreign key is refused.
- `ReEncrypt` moves a wrapped key to the key's current material (or another key) without the
  plaintext ever leaving KMS. Automatic rotation of the KMS key needs none of this: KMS keeps every
  older key material and decrypts with the one a blob names.
- `GenerateMac` (HMAC_SHA_256) over `tenant/user/scope` with `AGENTMEM_HMAC_KEY_ARN` keys the hash
  inside tokens; the service asks for the scope `*` (a user's tokens are the same in all their threads)
  and caches it per user, so a user costs one call per container.

Needs kms:GenerateDataKey, kms:Decrypt (data key) and kms:GenerateMac (HMAC key); kms:ReEncrypt* only
for `rewrap`, which `agentmem rewrap` runs with an operator's credentials, never a function.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError, HTTPClientError, NoCredentialsError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from agentmem.adapters.aws.lazy import LazyClient
from agentmem.domain.envelope import DecryptionFailed
from agentmem.domain.errors import BackendUnavailable
from agentmem.ports.vault import GeneratedKey

THREAD_HASH_LENGTH = 8
CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 5}, connect_timeout=2, read_timeout=5)
# KMS refusing this ciphertext or context: the caller's data, not an outage.
_REFUSED_CIPHERTEXT = frozenset({"InvalidCiphertextException", "IncorrectKeyException"})


class KmsKeyProvider:
    """KeyProvider on KMS (see the module docstring); the client is built on first use."""

    def __init__(self, key_arn: str, hmac_key_arn: str | None, client: Any = None) -> None:
        self.key_arn = key_arn
        self.hmac_key_arn = hmac_key_arn
        self._client = LazyClient(lambda: boto3.client("kms", config=CLIENT_CONFIG), client)

    @property
    def client(self) -> Any:
        return self._client()

    def generate_data_key(self, context: Mapping[str, str]) -> GeneratedKey:
        with _kms_errors():
            response = self.client.generate_data_key(
                KeyId=self.key_arn, KeySpec="AES_256", EncryptionContext=dict(context)
            )
        return GeneratedKey(plaintext=bytes(response["Plaintext"]), wrapped=bytes(response["CiphertextBlob"]))

    def unwrap(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        with _kms_errors():
            response = self.client.decrypt(CiphertextBlob=wrapped, EncryptionContext=dict(context), KeyId=self.key_arn)
        return bytes(response["Plaintext"])

    def rewrap(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        with _kms_errors():
            response = self.client.re_encrypt(
                CiphertextBlob=wrapped,
                SourceEncryptionContext=dict(context),
                SourceKeyId=self.key_arn,
                DestinationKeyId=self.key_arn,
                DestinationEncryptionContext=dict(context),
            )
        return bytes(response["CiphertextBlob"])

    def thread_hash(self, tenant: str, user_id: str, thread_id: str) -> str:
        if not self.hmac_key_arn:
            raise BackendUnavailable("keys", "AGENTMEM_HMAC_KEY_ARN is not set: PII tokens cannot be made")
        for name, part in (("tenant", tenant), ("user", user_id), ("thread", thread_id)):
            if not part or "/" in part:
                raise ValueError(f"{name} id must be non-empty and free of '/': {part!r}")
        with _kms_errors():
            response = self.client.generate_mac(
                KeyId=self.hmac_key_arn,
                MacAlgorithm="HMAC_SHA_256",
                Message=f"{tenant}/{user_id}/{thread_id}".encode(),
            )
        return bytes(response["Mac"]).hex()[:THREAD_HASH_LENGTH]


@contextmanager
def _kms_errors() -> Iterator[None]:
    try:
        yield
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in _REFUSED_CIPHERTEXT:
            raise DecryptionFailed(f"KMS refused the wrapped key: {code}") from exc
        raise BackendUnavailable("keys", f"KMS: {code or 'error'}") from exc
    except (BotocoreConnectionError, HTTPClientError, NoCredentialsError) as exc:
        raise BackendUnavailable("keys", f"KMS unreachable: {type(exc).__name__}") from exc
