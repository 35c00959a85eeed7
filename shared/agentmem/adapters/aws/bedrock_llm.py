"""The language model on Amazon Bedrock's Converse API (any Converse model: Claude, Nova, Llama, Mistral...).

Retries are explicit here rather than botocore's: throttling and passing
service errors are retried with backoff and jitter up to `max_attempts`, every
other error fails at once; either way the caller gets one typed error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, ConnectionError, ReadTimeoutError

from agentmem.adapters.aws.lazy import LazyClient
from agentmem.backoff import backoff
from agentmem.ports.llm import LlmOutOfFormat, LlmUnavailable

RETRYABLE_CODES = frozenset({
    "ThrottlingException", "ServiceUnavailableException", "InternalServerException",
    "ModelNotReadyException", "ModelTimeoutException", "TooManyRequestsException",
})
DEFAULT_MAX_ATTEMPTS = 4
# Consolidation makes two model calls inside the consolidate function's 120 s: each call, retries
# included, stops retrying once another wait would take it past this.
DEFAULT_DEADLINE_SECONDS = 50.0
FINISHED_STOP_REASONS = frozenset({"end_turn", "stop_sequence"})


class BedrockConverseModel:
    """LanguageModel on Bedrock Converse (`bedrock-runtime`), model id from settings (`llmModelId`)."""

    def __init__(
        self,
        model_id: str,
        client: Any = None,
        *,
        region: str | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        read_timeout: float = 45.0,
        deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.model_id = model_id
        self.region = region
        self.max_attempts = max(1, max_attempts)
        self.read_timeout = read_timeout
        self.deadline_seconds = deadline_seconds
        self._client = LazyClient(self._build_client, client)
        self._sleep = sleep
        self._clock = clock

    @property
    def client(self) -> Any:
        """The bedrock-runtime client, built on first use, with botocore's own retries off (ours count)."""
        return self._client()

    def _build_client(self) -> Any:
        config = Config(
            retries={"mode": "standard", "max_attempts": 1},
            connect_timeout=5,
            read_timeout=self.read_timeout,
        )
        return boto3.client("bedrock-runtime", region_name=self.region, config=config)

    def complete(
        self,
        system: str,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int,
        temperature: float = 0.0,
    ) -> str:
        request = {
            "modelId": self.model_id,
            "system": [{"text": system}],
            "messages": converse_messages(messages),
            "inferenceConfig": {"maxTokens": max_tokens, "temperature": temperature},
        }
        return self._answer_text(self._converse(request))

    def _converse(self, request: dict[str, Any]) -> dict[str, Any]:
        failure = "no attempt made"
        started = self._clock()
        attempts = 0
        for attempt in range(self.max_attempts):
            attempts += 1
            try:
                return self.client.converse(**request)  # type: ignore[no-any-return]
            except ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code", "ClientError"))
                failure = code
                if code not in RETRYABLE_CODES:
                    raise LlmUnavailable(f"Bedrock Converse failed: {code}") from exc
            except (ReadTimeoutError, ConnectionError) as exc:
                failure = type(exc).__name__
            except BotoCoreError as exc:
                raise LlmUnavailable(f"Bedrock Converse failed: {type(exc).__name__}") from exc
            wait = backoff(attempt, 0.5, 8.0)
            if attempt + 1 == self.max_attempts or self._clock() - started + wait > self.deadline_seconds:
                break
            self._sleep(wait)
        raise LlmUnavailable(f"Bedrock Converse failed after {attempts} attempts: {failure}")

    def _answer_text(self, response: Mapping[str, Any]) -> str:
        stop = response.get("stopReason")
        content = (response.get("output") or {}).get("message", {}).get("content") or []
        text = "".join(block["text"] for block in content if isinstance(block, dict) and "text" in block)
        if stop == "max_tokens":
            raise LlmOutOfFormat(f"{self.model_id} was cut off at maxTokens", text)
        if stop not in FINISHED_STOP_REASONS:
            raise LlmOutOfFormat(f"{self.model_id} stopped with {stop!r}", text)
        if not text.strip():
            raise LlmOutOfFormat(f"{self.model_id} answered no text")
        return text


def converse_messages(messages: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
    """Chat messages in Converse's shape; consecutive messages of one role are merged, as Converse requires."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role not in ("user", "assistant"):
            raise ValueError(f"Converse messages are user or assistant, not {role!r}")
        if out and out[-1]["role"] == role:
            out[-1]["content"].append({"text": message["content"]})
        else:
            out.append({"role": role, "content": [{"text": message["content"]}]})
    if not out or out[0]["role"] != "user":
        raise ValueError("Converse needs the first message to be the user's")
    return out


