"""The local KMS stand-in: key-encryption keys and the tenant secret in one 0600 file of the data folder.

The file is JSON: `{"format", "currentKek", "keks": {id: base64}, "hmacSecret": base64}`. It is
created on first use with mode 0600 (atomically: two processes starting together end up with one
file), and refused if anyone but its owner may read it, as ssh refuses a private key. A wrapped data
key names the KEK that wrapped it, so `rotate()` adds a KEK without touching existing data keys, and
`rewrap` moves a data key under the current KEK when asked, as KMS key rotation does.

Whoever can read this file can read every vault of the data folder: back it up apart from the data.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import stat
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentmem.domain.envelope import (
    DATA_KEY_BYTES,
    DecryptionFailed,
    new_data_key,
    unwrap_data_key,
    wrap_data_key,
)
from agentmem.domain.errors import BackendUnavailable
from agentmem.domain.pii import thread_hash
from agentmem.ports.vault import GeneratedKey

KEY_FILE_NAME = "vault.key"
FORMAT = "agentmem-keyfile/1"
_KEK_ID_BYTES = 8


class LocalKeyFile:
    """KeyProvider on a key file: AES-256-GCM wrapping with the context as associated data."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._content: dict[str, Any] | None = None

    # KeyProvider

    def generate_data_key(self, context: Mapping[str, str]) -> GeneratedKey:
        data_key = new_data_key()
        return GeneratedKey(plaintext=data_key, wrapped=self._wrap(data_key, context))

    def unwrap(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        kek_id, sealed = _split(wrapped)
        keks = self._load()["keks"]
        if kek_id not in keks:
            raise DecryptionFailed(f"the key file has no key-encryption key {kek_id!r}")
        return unwrap_data_key(_b64(keks[kek_id]), sealed, context)

    def rewrap(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        return self._wrap(self.unwrap(wrapped, context), context)

    def thread_hash(self, tenant: str, user_id: str, thread_id: str) -> str:
        return thread_hash(_b64(self._load()["hmacSecret"]), tenant, user_id, thread_id)

    # Administration

    def rotate(self) -> str:
        """Add a new key-encryption key and make it current; returns its id. Old KEKs keep unwrapping."""
        with self._lock:
            content = dict(self._read_or_create())
            kek_id = secrets.token_hex(_KEK_ID_BYTES // 2)
            content["keks"] = {**content["keks"], kek_id: _text(os.urandom(DATA_KEY_BYTES))}
            content["currentKek"] = kek_id
            self._write(content, replace=True)
            self._content = content
            return kek_id

    def current_kek_id(self) -> str:
        return str(self._load()["currentKek"])

    @staticmethod
    def kek_id_of(wrapped: bytes) -> str:
        """The id of the KEK a wrapped data key was wrapped with."""
        return _split(wrapped)[0]

    # Internals

    def _wrap(self, data_key: bytes, context: Mapping[str, str]) -> bytes:
        content = self._load()
        kek_id = content["currentKek"]
        sealed = wrap_data_key(_b64(content["keks"][kek_id]), data_key, context)
        encoded_id = kek_id.encode("ascii")
        return bytes([len(encoded_id)]) + encoded_id + sealed

    def _load(self) -> dict[str, Any]:
        if self._content is None:
            with self._lock:
                if self._content is None:
                    self._content = self._read_or_create()
        return self._content

    def _read_or_create(self) -> dict[str, Any]:
        if not self.path.exists():
            kek_id = secrets.token_hex(_KEK_ID_BYTES // 2)
            fresh = {
                "format": FORMAT,
                "currentKek": kek_id,
                "keks": {kek_id: _text(os.urandom(DATA_KEY_BYTES))},
                "hmacSecret": _text(os.urandom(DATA_KEY_BYTES)),
            }
            self._write(fresh, replace=False)
        mode = stat.S_IMODE(self.path.stat().st_mode)
        if mode & 0o077:
            raise BackendUnavailable(
                "keys", f"{self.path} is readable by others (mode {mode:o}); run `chmod 600 {self.path}`"
            )
        content: dict[str, Any] = json.loads(self.path.read_text())
        if content.get("format") != FORMAT or content.get("currentKek") not in content.get("keks", {}):
            raise BackendUnavailable("keys", f"{self.path} is not an agentmem key file")
        return content

    def _write(self, content: dict[str, Any], *, replace: bool) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        # O_EXCL with mode 0600: the secret is never on disk with wider permissions, not even briefly.
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as out:
                json.dump(content, out)
                out.flush()
                os.fsync(out.fileno())
            if replace:
                os.replace(temporary, self.path)
            else:
                # link() refuses an existing target: of two processes creating the file, one wins.
                with contextlib.suppress(FileExistsError):
                    os.link(temporary, self.path)
        finally:
            temporary.unlink(missing_ok=True)


def _split(wrapped: bytes) -> tuple[str, bytes]:
    if not wrapped or len(wrapped) < 1 + wrapped[0]:
        raise DecryptionFailed("not a locally wrapped data key")
    length = wrapped[0]
    return wrapped[1 : 1 + length].decode("ascii", errors="replace"), wrapped[1 + length :]


def _text(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _b64(text: str) -> bytes:
    return base64.b64decode(text)
