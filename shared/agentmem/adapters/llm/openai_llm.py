"""The language model on any OpenAI-compatible chat-completions endpoint (Ollama, vLLM, LM Studio, OpenAI).

Plain `urllib` with a timeout on every call; 429 and 5xx answers and dropped
connections are retried with backoff (honouring `Retry-After`), other 4xx fail
at once. The API key, when the endpoint needs one, is sent as a bearer token.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

from agentmem.backoff import backoff
from agentmem.ports.llm import LlmOutOfFormat, LlmUnavailable

RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
DEFAULT_MAX_ATTEMPTS = 4
# Consolidation makes two model calls inside the consolidate function's 120 s: each call, retries
# included, stops retrying once another wait would take it past this.
DEFAULT_DEADLINE_SECONDS = 50.0
MAX_RETRY_AFTER_SECONDS = 30.0
MAX_RESPONSE_BYTES = 8 * 1024 * 1024


class OpenAICompatibleModel:
    """LanguageModel on `POST {base_url}/chat/completions` (settings `openaiBaseUrl`, `openaiModel`)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 45.0,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        parsed = urlparse(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"openaiBaseUrl must be an http(s) URL, not {base_url!r}")
        if not model:
            raise ValueError("openaiModel is required with openaiBaseUrl")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model_id = model
        self.timeout = timeout
        self.max_attempts = max(1, max_attempts)
        self.deadline_seconds = deadline_seconds
        self._api_key = api_key
        self._sleep = sleep
        self._clock = clock

    def complete(
        self,
        system: str,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int,
        temperature: float = 0.0,
    ) -> str:
        body = {
            "model": self.model_id,
            "messages": [{"role": "system", "content": system}, *({**m} for m in messages)],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": False,
        }
        return self._answer_text(self._post(json.dumps(body).encode()))

    def _post(self, payload: bytes) -> Any:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        failure = "no attempt made"
        started = self._clock()
        attempts = 0
        for attempt in range(self.max_attempts):
            attempts += 1
            wait = backoff(attempt, 0.5, 8.0)
            request = urllib.request.Request(self.url, data=payload, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    raw = response.read(MAX_RESPONSE_BYTES + 1)
            except urllib.error.HTTPError as exc:
                failure = f"HTTP {exc.code}{_error_message(exc)}"
                if exc.code not in RETRYABLE_STATUSES:
                    raise LlmUnavailable(f"{self.model_id} at {self.url} failed: {failure}") from exc
                wait = max(wait, _retry_after(exc))
            except (urllib.error.URLError, TimeoutError, ConnectionError, http.client.HTTPException) as exc:
                failure = type(getattr(exc, "reason", exc)).__name__
            else:
                if len(raw) > MAX_RESPONSE_BYTES:
                    raise LlmOutOfFormat(f"{self.model_id} answered more than {MAX_RESPONSE_BYTES} bytes")
                try:
                    return json.loads(raw)
                except ValueError:
                    raise LlmOutOfFormat(f"{self.model_id} answered something that is not JSON",
                                         raw[:200].decode("utf-8", "replace")) from None
            if attempt + 1 == self.max_attempts or self._clock() - started + wait > self.deadline_seconds:
                break
            self._sleep(wait)
        raise LlmUnavailable(f"{self.model_id} at {self.url} failed after {attempts} attempts: {failure}")

    def _answer_text(self, payload: Any) -> str:
        choices = payload.get("choices") if isinstance(payload, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise LlmOutOfFormat(f"{self.model_id} answered without choices")
        choice = choices[0]
        content = (choice.get("message") or {}).get("content")
        if choice.get("finish_reason") == "length":
            raise LlmOutOfFormat(f"{self.model_id} was cut off at max_tokens", str(content or ""))
        if not isinstance(content, str) or not content.strip():
            raise LlmOutOfFormat(f"{self.model_id} answered no text")
        return content


def _retry_after(exc: urllib.error.HTTPError) -> float:
    try:
        return min(MAX_RETRY_AFTER_SECONDS, max(0.0, float(exc.headers.get("Retry-After", 0))))
    except (TypeError, ValueError):
        return 0.0  # an HTTP date: fall back to our own backoff


def _error_message(exc: urllib.error.HTTPError) -> str:
    try:
        payload = json.loads(exc.read(4096))
        message = payload.get("error", {}).get("message") if isinstance(payload, dict) else None
    except (ValueError, AttributeError, OSError):
        message = None
    return f": {str(message)[:200]}" if message else ""


