"""The embedder on Amazon Bedrock: Titan Text Embeddings v2, one InvokeModel call per text.

Titan v2 embeds one `inputText` per call, so a batch is spread over a small
thread pool (botocore clients are thread-safe). Throttling is retried by
botocore's adaptive mode, which also slows the client down under pressure.
Recent texts are answered from an LRU cache: retrieval embeds the same run
inputs again and again (retries, the same agent asked the same thing).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import numpy as np
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from agentmem.adapters.aws.lazy import LazyClient
from agentmem.domain.errors import BackendUnavailable

TITAN_V2 = "amazon.titan-embed-text-v2:0"
TITAN_V2_DIMENSIONS = (256, 512, 1024)
DEFAULT_CACHE_SIZE = 4096
DEFAULT_WORKERS = 4


class BedrockEmbedder:
    """Embedder on Bedrock's InvokeModel (Titan Text Embeddings v2 request and response shape)."""

    def __init__(
        self,
        model_id: str = TITAN_V2,
        dimension: int = 1024,
        client: Any = None,
        *,
        region: str | None = None,
        cache_size: int = DEFAULT_CACHE_SIZE,
        max_workers: int = DEFAULT_WORKERS,
    ):
        if model_id == TITAN_V2 and dimension not in TITAN_V2_DIMENSIONS:
            raise ValueError(f"Titan v2 embeds in {TITAN_V2_DIMENSIONS} dimensions, not {dimension}")
        self.model_id = model_id
        self.dimension = dimension
        self.region = region
        self.max_workers = max(1, max_workers)
        self._client = LazyClient(self._build_client, client)
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._cache_lock = threading.Lock()

    @property
    def client(self) -> Any:
        """The bedrock-runtime client, built on first use."""
        return self._client()

    def _build_client(self) -> Any:
        config = Config(
            retries={"mode": "adaptive", "max_attempts": 5},
            connect_timeout=2,
            read_timeout=10,
            max_pool_connections=max(10, self.max_workers),
        )
        return boto3.client("bedrock-runtime", region_name=self.region, config=config)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        with self._cache_lock:
            for row, text in enumerate(texts):
                cached = self._cache.get(text)
                if cached is None:
                    missing.setdefault(text, []).append(row)
                else:
                    self._cache.move_to_end(text)
                    out[row] = cached
        if missing:
            unique = list(missing)
            if len(unique) == 1 or self.max_workers == 1:
                vectors = [self._embed_one(text) for text in unique]
            else:
                with ThreadPoolExecutor(max_workers=min(self.max_workers, len(unique))) as pool:
                    # map keeps the input order, whatever order the calls finish in.
                    vectors = list(pool.map(self._embed_one, unique))
            with self._cache_lock:
                for text, vector in zip(unique, vectors, strict=True):
                    for row in missing[text]:
                        out[row] = vector
                    self._remember(text, vector)
        return out

    def _embed_one(self, text: str) -> np.ndarray:
        body = json.dumps({"inputText": text, "dimensions": self.dimension, "normalize": True})
        try:
            response = self.client.invoke_model(
                modelId=self.model_id, body=body, contentType="application/json", accept="application/json"
            )
            payload = json.loads(response["body"].read())
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "ClientError")
            raise BackendUnavailable("embedder", f"Bedrock InvokeModel failed: {code}") from exc
        except (BotoCoreError, ValueError) as exc:
            raise BackendUnavailable("embedder", f"Bedrock InvokeModel failed: {type(exc).__name__}") from exc
        return self._unit_vector(payload)

    def _unit_vector(self, payload: Any) -> np.ndarray:
        embedding = payload.get("embedding") if isinstance(payload, dict) else None
        if not isinstance(embedding, list) or len(embedding) != self.dimension:
            got = "no embedding" if not isinstance(embedding, list) else f"{len(embedding)} dimensions"
            raise BackendUnavailable("embedder", f"{self.model_id} answered {got}, expected {self.dimension}")
        try:
            vector = np.asarray(embedding, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise BackendUnavailable("embedder", f"{self.model_id} answered a non-numeric embedding") from exc
        norm = float(np.linalg.norm(vector))
        if not np.isfinite(norm) or norm == 0.0:
            raise BackendUnavailable("embedder", f"{self.model_id} answered a vector of no length")
        # Titan normalises when asked, but only to float precision: normalise here so every
        # adapter hands the index exactly unit vectors.
        vector /= norm
        vector.setflags(write=False)
        return vector

    def _remember(self, text: str, vector: np.ndarray) -> None:
        if self._cache_size <= 0:
            return
        self._cache[text] = vector
        self._cache.move_to_end(text)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
