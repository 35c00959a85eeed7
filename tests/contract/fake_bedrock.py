"""A test double of the Bedrock Titan Text Embeddings v2 SERVER (not of the adapter under test).

Registered on a real bedrock-runtime client's `before-send` event, it answers
the signed InvokeModel HTTP request botocore built, in Titan v2's response
shape, so the adapter's request building, response parsing, threading, cache
and normalisation all run for real. Its vectors are hashed character
trigrams: deterministic and text-dependent, but not a language model, so the
semantic property of the contract ("similar texts are closer") is not asked of it.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
from typing import Any

import numpy as np
from botocore.awsrequest import AWSPreparedRequest, AWSResponse


class _RawBody(io.BytesIO):
    """What botocore reads an HTTP body from (urllib3's `stream()` interface)."""

    def stream(self, **kwargs: Any) -> Any:
        contents = self.read()
        while contents:
            yield contents
            contents = self.read()


class TitanServerDouble:
    """Answers InvokeModel like Titan v2: `{"embedding", "inputTextTokenCount"}`; records every request body."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.urls: list[str] = []
        self._lock = threading.Lock()

    def attach(self, client: Any) -> None:
        client.meta.events.register("before-send.bedrock-runtime.InvokeModel", self._answer)

    def _answer(self, request: AWSPreparedRequest, **kwargs: Any) -> AWSResponse:
        body = json.loads(request.body or b"{}")
        with self._lock:
            self.requests.append(body)
            self.headers.append(
                {k.lower(): v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()}
            )
            self.urls.append(request.url)
        text = body.get("inputText", "")
        if not text:
            return _response(
                request,
                400,
                {"message": "Malformed input request: expected minLength: 1"},
                error_type="ValidationException",
            )
        vector = trigram_vector(text, int(body.get("dimensions", 1024)))
        if not body.get("normalize", True):
            vector = vector * 3.7  # Titan leaves the length alone when not asked to normalise
        payload = {"embedding": [float(x) for x in vector], "inputTextTokenCount": len(text.split())}
        return _response(request, 200, payload)


def trigram_vector(text: str, dimension: int) -> np.ndarray:
    """A unit vector of hashed character trigrams of `text`."""
    counts = np.zeros(dimension, dtype=np.float64)
    padded = f"  {text.lower()}  "
    for i in range(len(padded) - 2):
        bucket = int.from_bytes(hashlib.blake2b(padded[i : i + 3].encode(), digest_size=4).digest(), "big")
        counts[bucket % dimension] += 1.0
    return counts / np.linalg.norm(counts)


def _response(
    request: AWSPreparedRequest, status: int, payload: dict[str, Any], error_type: str | None = None
) -> AWSResponse:
    headers = {"content-type": "application/json", "x-amzn-requestid": "double-0001"}
    if error_type:
        headers["x-amzn-errortype"] = error_type
    return AWSResponse(request.url, status, headers, _RawBody(json.dumps(payload).encode()))
