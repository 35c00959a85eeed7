"""The privacy check: personal data masked on the agent side, never carried across users, erased for real.

One scenario, through the real Lambda handlers (API Gateway proxy events in, answers out), on the
embedded backends (`run_local`) or on the AWS adapters under moto (`run_moto`):

1. User A's run (retrieve with `userId`), its output and an editor's 👎 comment hold an email, a card
   number and a person's name; so do a run made without a user and its comment.
2. The lessons they become hold tokens only (the wall's data, the digest that is embedded), and the
   embedder was never given a value.
3. User B's retrieve gets the lesson injected: tokens, and B's unmask of them restores nothing of A's.
4. Nothing at rest holds a value, before the erase too (every SQLite file, `-wal` included; every
   DynamoDB item of both tables).
5. A copy of the data is taken (every file but the key store; every item of the tenant table), then
   `DELETE /v1/users/A`: A's runs are gone, A's tokens stay tokens for A too, no file or item holds
   a value, the key store holds no key of A.
6. The copy, put beside the key store as it is after the erase (a restore of a backup), restores
   none of A's values: unmask through the service, and every vault ciphertext tried with every key.
7. `DELETE /v1/agents/{agent}/personal-data` kills the tokens of the run made without a user.

Names need a detector that finds PERSON; the checks that depend on it say so (`needs_names`), so a
regex-only detector shows as a failed name check rather than as a pass.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentmem.domain.envelope import DecryptionFailed, decrypt_value, encryption_context
from agentmem.domain.pii import agent_subject, find_tokens
from agentmem.ports.pii import PiiDetector

AGENT = "support-bot"
USER_A, USER_B = "user-a", "user-b"
EMAIL_A = "alice.smith@example.com"
CARD_A = "4111 1111 1111 1111"
NAME_A = "Alice Smith"
EMAIL_B = "bob.jones@example.org"
NAME_PROBE = "Please call Alice Smith tomorrow."


@dataclass
class Check:
    """One thing the scenario verified: what, whether it held, and what was seen when it did not."""

    name: str
    ok: bool
    detail: str = ""
    needs_names: bool = False


@dataclass
class Report:
    backend: str
    detector: str
    finds_names: bool
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, ok: bool, detail: str = "", *, needs_names: bool = False) -> None:
        self.checks.append(Check(name, bool(ok), "" if ok else detail, needs_names))

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]


class RecordingEmbedder:
    """The wired embedder, keeping every text it was given (what the check reads)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.model_id, self.dimension = inner, inner.model_id, inner.dimension
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed(texts)


def finds_names(detector: PiiDetector) -> bool:
    """Whether `detector` finds the person's name of the scenario (a PERSON span over it)."""
    return any(s.entity_type == "PERSON" and NAME_A in s.value for s in detector.detect(NAME_PROBE))


def call(services: Any, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
    """One request through the real handler of its route, as `agentmem serve` makes it."""
    from agentmem.local import apigateway
    from agentmem.local.lambda_runtime import invoke
    from agentmem.wiring import set_services

    set_services(services)
    found = apigateway.match(method, path.split("?", 1)[0])
    if found.route is None:
        raise LookupError(f"no route {method} {path}")
    event = apigateway.proxy_event(
        found.route, found.path_parameters, method, path,
        {"Content-Type": "application/json", **(headers or {})},
        json.dumps(body) if body is not None else None, "127.0.0.1",
    )
    result = invoke(found.route.function, event)
    payload = result.get("body")
    return int(result["statusCode"]), (json.loads(payload) if payload else None)


def _leaks(text: str, values: Sequence[str]) -> list[str]:
    return [v for v in values if v in text]


def _scenario(
    report: Report,
    services: Any,
    embedder: RecordingEmbedder,
    at_rest: Callable[[], bytes],
    snapshot: Callable[[], Any],
    restored: Callable[[Any], Any],
    key_store_holds: Callable[[str], bool],
) -> None:
    values = [EMAIL_A, CARD_A, NAME_A]
    structured = [EMAIL_A, CARD_A]

    def record(label: str, text: str) -> None:
        leaked = _leaks(text, structured)
        report.add(f"{label}: no email or card", not leaked, f"found {leaked} in {text[:200]!r}")
        report.add(f"{label}: no name", NAME_A not in text, f"found the name in {text[:200]!r}", needs_names=True)

    # 1. A's run, its output and the editor's comment; a run without a user and its comment.
    status, answer = call(services, "POST", f"/v1/agents/{AGENT}/retrieve", {
        "input": f"Customer {NAME_A} ({EMAIL_A}) asks for a refund to the card {CARD_A}.",
        "userId": USER_A, "threadId": "t1",
    })
    run_a = answer["runId"]
    call(services, "PUT", f"/v1/agents/{AGENT}/runs/{run_a}/output",
         {"output": f"Refund sent to {EMAIL_A} for card {CARD_A}; {NAME_A} was told."})
    comment = f"Never echo the card {CARD_A} or the address {EMAIL_A}; do not greet {NAME_A} by name."
    status, answer = call(services, "POST", f"/v1/agents/{AGENT}/runs/{run_a}/feedback",
                          {"rating": "down", "comment": comment}, {"Idempotency-Key": "review-1"})
    report.add("feedback on A's run accepted", status == 202, f"{status} {answer}")
    status, answer = call(services, "POST", f"/v1/agents/{AGENT}/runs", {
        "input": f"Write to {EMAIL_A} about the refund", "output": f"Dear {NAME_A}, your card {CARD_A} ...",
    })
    run_agent = answer["runId"]
    call(services, "POST", f"/v1/agents/{AGENT}/runs/{run_agent}/feedback",
         {"rating": "down", "comment": f"Do not repeat {CARD_A} in a letter."})
    services.memory.index_pending()

    # 2. The lessons and runs as the wall shows them; what the embedder saw.
    status, page = call(services, "GET", f"/v1/agents/{AGENT}/memories?limit=20")
    lessons = page["items"]
    report.add("two lessons made", len(lessons) == 2, f"{len(lessons)} lessons")
    wall = json.dumps(lessons, ensure_ascii=False)
    record("lessons on the wall (comment, digest)", wall)
    report.add("lessons carry tokens", len(find_tokens(wall)) >= 4, f"{len(find_tokens(wall))} tokens")
    for run_id, label in ((run_a, "A's run"), (run_agent, "the run without a user")):
        record(label, json.dumps(call(services, "GET", f"/v1/agents/{AGENT}/runs/{run_id}")[1], ensure_ascii=False))
    record("texts given to the embedder", "\n".join(embedder.texts))

    # 3. B's run gets the lesson; B's unmask restores nothing of A's.
    status, answer = call(services, "POST", f"/v1/agents/{AGENT}/retrieve", {
        "input": f"Customer {EMAIL_B} asks for a refund to the card on file.", "userId": USER_B, "threadId": "t1",
    })
    injected = "\n".join(m["content"] for m in answer["messages"])
    ids = {lesson["memoryId"] for lesson in lessons}
    report.add("B's retrieve injects A's lesson", any(got["memoryId"] in ids for got in answer["lessons"]),
               f"lessons {answer['lessons']}")
    record("B's retrieve messages", injected)
    unmasked_b = call(services, "POST", f"/v1/users/{USER_B}/threads/t1/unmask", {"text": injected})[1]["text"]
    record("B's unmask of the injected lesson", unmasked_b)
    lesson_a = next(lesson["digest"] for lesson in lessons if lesson["runId"] == run_a)
    unmasked_a = call(services, "POST", f"/v1/users/{USER_A}/threads/t9/unmask", {"text": lesson_a})[1]["text"]
    report.add("A's unmask of the lesson restores A's values (before the erase)",
               EMAIL_A in unmasked_a and CARD_A in unmasked_a, unmasked_a[:200])

    # 4. Nothing at rest holds a value, even before the erase.
    dump = at_rest()
    leaked = [v for v in values if v.encode() in dump]
    report.add("at rest before the erase: no email or card", not set(leaked) & set(structured), f"found {leaked}")
    report.add("at rest before the erase: no name", NAME_A not in leaked, "found the name", needs_names=True)

    # 5. A copy of the data, then the erase.
    backup = snapshot()
    status, _ = call(services, "DELETE", f"/v1/users/{USER_A}")
    report.add("DELETE /v1/users/A answers 204", status == 204, str(status))
    status, _ = call(services, "GET", f"/v1/agents/{AGENT}/runs/{run_a}")
    report.add("A's run is erased", status == 404, str(status))
    after = call(services, "POST", f"/v1/users/{USER_A}/threads/t9/unmask", {"text": lesson_a})[1]["text"]
    report.add("A's tokens in the lesson stay tokens, for A too", after == lesson_a, after[:200])
    dump = at_rest()
    leaked = [v for v in values if v.encode() in dump]
    report.add("at rest after the erase: no email or card", not set(leaked) & set(structured), f"found {leaked}")
    report.add("at rest after the erase: no name", NAME_A not in leaked, "found the name", needs_names=True)
    report.add("the key store holds no key of A", not key_store_holds(USER_A), "a key of A is still there")

    # 6. The copy from before the erase, beside the key store as it is now.
    old = restored(backup)
    text = f"{lesson_a}\n{unmasked_a}"
    unmasked_old = old.conversations.unmask(USER_A, "t1", lesson_a)
    record("the restored copy's unmask of A's lesson", unmasked_old)
    tokens = [t.token for t in find_tokens(text)]
    entries = old.conversations.vault.get_entries(old.settings.tenant, USER_A, tokens)
    report.add("the restored copy still has A's ciphertexts (so the check means something)", bool(entries),
               "no vault entry of A in the copy")
    opened = _decrypt_with_every_key(old, entries)
    report.add("no key in the key store decrypts any of them", not opened, f"decrypted {opened}")

    # 7. The agent's own subject: the run without a user.
    subject = agent_subject(AGENT)
    report.add("the run without a user has its own vault subject", key_store_holds(subject), "no key")
    status, _ = call(services, "DELETE", f"/v1/agents/{AGENT}/personal-data")
    report.add("DELETE /v1/agents/{agent}/personal-data answers 204", status == 204, str(status))
    report.add("the agent subject's key is destroyed", not key_store_holds(subject), "still there")


def _decrypt_with_every_key(services: Any, entries: Sequence[Any]) -> list[str]:
    """The values of `entries` that any data key of the tenant's key store decrypts (must be none)."""
    conversations = services.conversations
    opened = []
    for stored in conversations.key_store.iter_data_keys(services.settings.tenant):
        try:
            plaintext = conversations.keys.unwrap(stored.wrapped, encryption_context(stored.tenant, stored.user_id))
        except DecryptionFailed:
            continue
        for entry in entries:
            with contextlib.suppress(DecryptionFailed):
                opened.append(decrypt_value(plaintext, entry.token, entry.ciphertext))
    return opened


# Local


KEY_STORE_FILES = ("keys.db", "keys.db-wal", "keys.db-shm", "vault.key")


def _folder_bytes(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file())


def run_local(folder: Path, *, detector: PiiDetector | None = None) -> Report:
    """The scenario on the embedded backends, in `folder` (a fresh data folder)."""
    from agentmem.config import load_settings
    from agentmem.wiring import build_services, set_services

    def build(data: Path) -> Any:
        settings = load_settings(backend="local", data_dir=data, enabled_agents=[AGENT])
        return build_services(settings, embedder=RecordingEmbedder(_embedder()), pii_detector=detector)

    data = folder / "data"
    services = build(data)
    opened = [services]
    wired = services.conversations.detector
    report = Report("local (SQLite files)", type(wired).__name__, finds_names(wired))

    def snapshot() -> Path:
        # Every file of the data folder but the key store and its key file: a backup of the data.
        copy = folder / "backup"
        copy.mkdir()
        for path in data.iterdir():
            if path.is_file() and path.name not in KEY_STORE_FILES:
                shutil.copy2(path, copy / path.name)
        return copy

    def restored(copy: Path) -> Any:
        place = folder / "restored"
        shutil.copytree(copy, place)
        for name in KEY_STORE_FILES:
            if (data / name).exists():
                shutil.copy2(data / name, place / name)
        built = build(place)
        opened.append(built)
        return built

    def key_store_holds(subject: str) -> bool:
        return services.conversations.key_store.get_data_key(services.settings.tenant, subject) is not None

    try:
        _scenario(report, services, services.memory.embedder.inner, lambda: _folder_bytes(data), snapshot,
                  restored, key_store_holds)
    finally:
        set_services(None)
        for built in opened:
            built.close()
    return report


# Under moto


def run_moto(folder: Path, *, detector: PiiDetector | None = None) -> Report:
    """The scenario on the AWS adapters under moto: DynamoDB (both tables), KMS, EventBridge.

    moto's Comprehend answers every call with the same canned entities at fixed offsets of any
    text, so the detector is `detector`, by default the local one (structured rules plus Presidio,
    which finds the name as Comprehend would): what this run checks is the AWS stores, keys and
    erase, not Comprehend's recall (the Comprehend adapter has the PII contract suite). The vector
    index and embedder are the local ones (moto has no OpenSearch data plane and no embeddings).
    """
    from agentmem.adapters.local.presidio_pii import LocalPiiDetector
    from agentmem.config import load_settings
    from agentmem.local.moto_backend import KEY_TABLE, TABLE, moto_backend
    from agentmem.wiring import build_services, set_services

    with moto_backend("acme") as local_parts:
        import boto3

        dynamodb = boto3.client("dynamodb")
        chosen = detector or LocalPiiDetector()

        def build(table: str) -> Any:
            settings = load_settings(table_name=table, enabled_agents=[AGENT], data_dir=folder / table)
            return build_services(
                settings, vectors=local_parts["vectors"], embedder=RecordingEmbedder(local_parts["embedder"]),
                pii_detector=chosen,
            )

        services = build(TABLE)
        opened = [services]
        report = Report("aws adapters under moto (DynamoDB, KMS)", type(chosen).__name__, finds_names(chosen))

        def scan(table: str) -> list[dict[str, Any]]:
            return list(_scan(dynamodb, table))

        def at_rest() -> bytes:
            items = scan(TABLE) + scan(KEY_TABLE)
            return json.dumps(items, default=lambda b: b.hex() if isinstance(b, bytes) else str(b)).encode()

        def restored(items: list[dict[str, Any]]) -> Any:
            # A point-in-time restore of the tenant table into a new table, beside the key table as it is.
            from infra.template_schema import table_key_schema_from_template

            name = f"{TABLE}-restored"
            dynamodb.create_table(TableName=name, **table_key_schema_from_template())
            for item in items:
                dynamodb.put_item(TableName=name, Item=item)
            built = build(name)
            opened.append(built)
            return built

        def key_store_holds(subject: str) -> bool:
            return services.conversations.key_store.get_data_key("acme", subject) is not None

        try:
            _scenario(report, services, services.memory.embedder.inner, at_rest, lambda: scan(TABLE), restored,
                      key_store_holds)
        finally:
            set_services(None)
            for built in opened:
                built.close()
    return report


def _scan(client: Any, table: str) -> Iterator[dict[str, Any]]:
    request: dict[str, Any] = {"TableName": table}
    while True:
        page = client.scan(**request)
        yield from page["Items"]
        if "LastEvaluatedKey" not in page:
            return
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _embedder() -> Any:
    from agentmem.adapters.local.minilm import MiniLMEmbedder

    return MiniLMEmbedder()


@contextmanager
def scratch_folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="agentmem-privacy-") as tmp:
        yield Path(tmp)


def format_report(report: Report) -> str:
    lines = [f"== {report.backend}; detector {report.detector} "
             f"({'finds' if report.finds_names else 'does not find'} the name {NAME_A!r})"]
    for check in report.checks:
        mark = "ok  " if check.ok else "FAIL"
        note = " [needs a name detector]" if check.needs_names and not check.ok else ""
        lines.append(f"  {mark} {check.name}{note}" + (f": {check.detail}" if check.detail else ""))
    return "\n".join(lines)

