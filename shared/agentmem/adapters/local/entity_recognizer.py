"""spaCy's entity recognizer for one text at a time, computed from its own weights without its C parse loop.

en_core_web_md's ``ner`` is a tok2vec (four hash embeddings and the static vectors, mixed by a maxout layer,
then four maxout window layers with layer norm and residuals), a linear layer, a precomputed affine layer
over three state features and a greedy BILUO transition loop. spaCy runs the dense part through BLIS, which
on this machine's CPU (AMD family 26) falls back to its generic reference kernels, and its parse loop
reacquires the GIL in every validity check of every action (``StateC::B`` and friends): 3.3 ms of CPU for
a 22-token query, of which the dense layers 1.6 and the loop 1.2.

:class:`GreedyEntityRecognizer` reads the same weights out of the loaded component and computes:

- the hash embeddings and static vectors in numpy, as thinc does (the same murmur hashes, rows summed in
  the same order);
- the dense layers as one ONNX graph run by onnxruntime on one thread (MLAS picks this CPU's AVX-512
  kernels), with thinc's zero padding of four rows around the text that the window layers see;
- the transition loop in Python: with no entity open the three state features are (the next word,
  padding, padding), so every word's closed-state scores come from one batched product; a step with an
  entity open (few) is computed alone. The validity rules are spaCy's ``BiluoPushDown`` rules for a doc
  without preset entities or sentence starts; any other doc (and an empty one) goes to spaCy's own
  component.

The scores differ from spaCy's by float rounding only (different summation order in the matrix
products), so a choice between two actions could only differ on a near tie: the entities found are
checked to be identical on every text of pii-dev and LoCoMo-dev by ``scripts/check_ner_spans.py``.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agentmem.adapters.local.minilm_onnx import default_cache_dir

if TYPE_CHECKING:
    import onnxruntime
    from spacy.tokens import Doc

log = logging.getLogger(__name__)
# Part of the cached graph's file name: raise it when `_dense_graph` builds a different graph.
GRAPH_VERSION = "1"
# thinc's LayerNorm adds this to the variance.
_LAYER_NORM_EPSILON = 1e-8
_WINDOW_PAD = 4  # thinc's with_array(pad=window_size * depth) around the window layers
_FEATURE_ATTRS = ("NORM", "PREFIX", "SUFFIX", "SHAPE")
# One Doc.to_array call reads all a decision needs; the columns' positions follow.
_ATTRS = ("ENT_IOB", "SENT_START", "IS_SPACE", "ORTH", *_FEATURE_ATTRS)
_ENT_IOB, _SENT_START, _IS_SPACE, _ORTH, _FIRST_FEATURE = range(5)

# Move types of spaCy's BILUO transition system, by the first letter of a class name.
_BEGIN, _IN, _LAST, _UNIT, _OUT = "B", "I", "L", "U", "O"


class UnsupportedModel(ValueError):
    """The loaded ``ner`` component is not the architecture this recognizer reproduces."""


@dataclass(frozen=True, slots=True)
class _HashEmbedding:
    column: int
    seed: int
    table: np.ndarray  # (rows, width)


@dataclass(frozen=True, slots=True)
class _Maxout:
    weights: np.ndarray  # (out, pieces, in)
    bias: np.ndarray  # (out, pieces)
    gain: np.ndarray  # the layer norm's G
    shift: np.ndarray  # the layer norm's b


class GreedyEntityRecognizer:
    """A drop-in ``ner`` pipeline component computing what spaCy's ``EntityRecognizer`` computes.

    ``GreedyEntityRecognizer(nlp.get_pipe("ner"))`` reads the component's weights (it raises
    :class:`UnsupportedModel` for another architecture); calling it on a tokenised ``Doc`` sets
    ``doc.ents`` as the original would. It keeps the original for the docs it does not handle.
    """

    def __init__(self, component: Any) -> None:
        self._component = component
        model = component.model
        self._hash = _hash_function(model.ops)
        if model.name != "parser_model" or not model.attrs.get("has_upper") or component.cfg.get("beam_width") != 1:
            raise UnsupportedModel("not a greedy TransitionBasedParser with an upper layer")
        if model.attrs.get("unseen_classes") or component.postprocesses:
            raise UnsupportedModel("unseen classes or postprocesses")
        embeddings, static, maxouts, linear = _read_tok2vec(model.get_ref("tok2vec"))
        self._embeddings = embeddings
        self._vectors = component.vocab.vectors
        if self._vectors.mode != "default":
            raise UnsupportedModel(f"vectors in {self._vectors.mode} mode")
        lower, upper = model.get_ref("lower"), model.get_ref("upper")
        lower_w = lower.get_param("W")  # (features, hidden, pieces, in)
        features, self._hidden, self._pieces, _ = lower_w.shape
        if features != 3:
            raise UnsupportedModel("an NER state has three features")
        self._feature_bias = np.ascontiguousarray(lower.get_param("b").reshape(-1))
        self._upper_w = np.ascontiguousarray(upper.get_param("W").T)  # (hidden, classes)
        self._upper_b = np.ascontiguousarray(upper.get_param("b"))
        self._session = _dense_session(
            static, maxouts, linear, (lower_w, lower.get_param("pad"), lower.get_param("b")),
            (upper.get_param("W"), upper.get_param("b")),
        )
        self._classes = _Classes([component.moves.get_class_name(i) for i in range(component.moves.n_moves)])
        if len(self._classes.names) != self._upper_b.shape[0]:
            raise UnsupportedModel("the upper layer's width is not the number of moves")
        self._label_ids = {label: component.vocab.strings.add(label) for label in self._classes.labels}

    @property
    def labels(self) -> tuple[str, ...]:
        """The entity labels, as spaCy's component lists them."""
        return tuple(self._component.labels)

    @property
    def spacy_component(self) -> Any:
        """The original spaCy component, which this one reads its weights from."""
        return self._component

    def __call__(self, doc: Doc) -> Doc:
        """``doc`` with its entities set, as spaCy's component sets them."""
        attrs = doc.to_array(list(_ATTRS))
        if len(doc) == 0 or attrs[:, _ENT_IOB].any() or (attrs[1:, _SENT_START] == 1).any():
            return self._component(doc)  # type: ignore[no-any-return]
        table, closed = self._dense(attrs)
        entities = self._decode(table, closed, attrs[:, _IS_SPACE].astype(bool))
        from spacy.tokens import Span

        spans = [Span(doc, start, end, label=self._label_ids[label]) for start, end, label in entities]
        doc.set_ents(spans, default="outside")
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: int = 128) -> Iterator[Doc]:
        """Each doc in turn (``Language.pipe`` calls this)."""
        for doc in docs:
            yield self(doc)

    def _dense(self, attrs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The precomputed affine layer's table (words, 3, hidden * pieces) and the closed-state scores."""
        embedded = []
        for embedding in self._embeddings:
            ids = np.ascontiguousarray(attrs[:, _FIRST_FEATURE + embedding.column])
            rows = self._hash(ids, embedding.seed) % embedding.table.shape[0]
            table = embedding.table
            # thinc's gather_add sums the four rows in this order.
            embedded.append(table[rows[:, 0]] + table[rows[:, 1]] + table[rows[:, 2]] + table[rows[:, 3]])
        vector_rows = _vector_rows(self._vectors, np.ascontiguousarray(attrs[:, _ORTH]))
        vectors = self._vectors.data[np.maximum(vector_rows, 0)]
        vectors[vector_rows < 0] = 0.0
        table, closed = self._session.run(None, {"embedded": np.concatenate(embedded, axis=1), "vectors": vectors})
        return table.reshape(len(attrs), 3, -1), closed

    def _hiddens(self, unmaxed: np.ndarray) -> np.ndarray:
        return (unmaxed + self._feature_bias).reshape(self._hidden, self._pieces).max(axis=1)

    def _decode(self, table: np.ndarray, closed: np.ndarray, is_space: np.ndarray) -> list[tuple[int, int, str]]:
        """spaCy's greedy BILUO decoding: the best valid move at each word, the first class on a tie."""
        length = len(table)
        classes = self._classes
        # With no entity open: O, U-x, and B-x but on the last word; no entity opens on whitespace.
        valid = np.broadcast_to(classes.closed_valid, closed.shape).copy()
        valid[-1] &= ~classes.begin
        valid[is_space] &= ~classes.opens_entity
        best_closed = np.where(valid, closed, -np.inf).argmax(axis=1)
        entities: list[tuple[int, int, str]] = []
        position = 0
        while position < length:
            move, label = classes.moves[int(best_closed[position])]
            start = position
            if move == _BEGIN:
                in_last = classes.in_last[label]
                weights, bias = self._upper_w[:, in_last], self._upper_b[in_last]
                position += 1
                # An entity is open: only I-label (not on the last word) and L-label are valid, and the
                # state's features are (this word, the entity's first word, the word before).
                while position < length - 1:
                    unmaxed = (table[position, 0] + table[start, 1]) + table[position - 1, 2]
                    scores = self._hiddens(unmaxed) @ weights + bias
                    if scores[1] > scores[0]:
                        break
                    position += 1
            if move in (_BEGIN, _UNIT):
                entities.append((start, position + 1, label))
            position += 1
        return entities


class _Classes:
    """The transition system's classes in score order, and which are valid with no entity open."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.moves = [(move, label) for move, _, label in (name.partition("-") for name in names)]
        self.labels = sorted({label for move, label in self.moves if label and move in (_BEGIN, _UNIT)})
        index = {move: i for i, move in enumerate(self.moves)}
        if any((move, label) not in index for label in self.labels for move in (_BEGIN, _IN, _LAST, _UNIT)):
            raise UnsupportedModel("a label lacks one of its B, I, L, U moves")
        if (_OUT, "") not in index:
            raise UnsupportedModel("no O move")
        # spaCy takes the first class on a tie; In is listed before Last, so [In, Last] keeps that order.
        self.in_last = {label: np.array([index[(_IN, label)], index[(_LAST, label)]]) for label in self.labels}
        if any(pair[0] > pair[1] for pair in self.in_last.values()):
            raise UnsupportedModel("Last listed before In")
        self.begin = np.array([move == _BEGIN and bool(label) for move, label in self.moves])
        unit = np.array([move == _UNIT and bool(label) for move, label in self.moves])
        self.opens_entity = self.begin | unit
        # The blocking "U-" (no label) is valid only on a preset blocked word; I-x and L-x need an open entity.
        self.closed_valid = self.opens_entity | np.array([move == _OUT for move, _ in self.moves])


def _hash_function(ops: Any) -> Callable[[np.ndarray, int], np.ndarray]:
    from thinc.api import NumpyOps

    if not isinstance(ops, NumpyOps):
        raise UnsupportedModel(f"ops {type(ops).__name__}, not NumpyOps")
    return ops.hash  # type: ignore[no-any-return]


def _vector_rows(vectors: Any, keys: np.ndarray) -> np.ndarray:
    rows_of = getattr(vectors.key2row, "rows", None)
    if rows_of is not None:
        return rows_of(keys)  # type: ignore[no-any-return]
    return np.asarray(vectors.find(keys=keys), dtype=np.int64)


def _read_tok2vec(
    tok2vec: Any,
) -> tuple[list[_HashEmbedding], np.ndarray, list[_Maxout], tuple[np.ndarray, np.ndarray]]:
    """The weights of spaCy.Tok2Vec.v2 (MultiHashEmbed.v2 with static vectors, MaxoutWindowEncoder.v2),
    chained with list2array and a linear layer, as TransitionBasedParser.v2 builds it."""
    layers = {node.name: node for node in tok2vec.walk()}
    extract = layers.get("extract_features")
    if extract is None or tuple(extract.attrs["columns"]) != _FEATURE_ATTRS:
        raise UnsupportedModel("the tok2vec does not embed NORM, PREFIX, SUFFIX, SHAPE")
    nodes = list(tok2vec.walk())
    embeddings = [
        _HashEmbedding(int(node.attrs["column"]), int(node.attrs["seed"]), node.get_param("E"))
        for node in nodes if node.name == "hashembed"
    ]
    statics = [node for node in nodes if node.name == "static_vectors"]
    windows = [node for node in nodes if node.name == "expand_window"]
    if (
        sorted(e.column for e in embeddings) != [0, 1, 2, 3]
        or len(statics) != 1
        or statics[0].attrs.get("key_attr", "ORTH") != "ORTH"
        or any(node.attrs["window_size"] != 1 for node in windows)
    ):
        raise UnsupportedModel("not four hash embeddings, static vectors and windows of one word")
    embeddings.sort(key=lambda e: e.column)
    maxout_norms = [node for node in nodes if node.name == "maxout>>layernorm"]
    maxouts = []
    for node in maxout_norms:
        maxout, norm = node.layers
        maxouts.append(_Maxout(maxout.get_param("W"), maxout.get_param("b"), norm.get_param("G"), norm.get_param("b")))
    if len(maxouts) != 1 + len(windows) or maxouts[0].weights.shape[2] != sum(
        e.table.shape[1] for e in embeddings
    ) + statics[0].get_dim("nO"):
        raise UnsupportedModel("not a mixing maxout followed by one maxout per window layer")
    if any(node.name.startswith("with_array(residual") and node.attrs.get("pad") != len(windows) for node in nodes):
        raise UnsupportedModel("window padding is not the encoder's depth")
    last = tok2vec.layers[-1]
    if last.name != "linear":
        raise UnsupportedModel("the tok2vec does not end in a linear layer")
    return embeddings, statics[0].get_param("W"), maxouts, (last.get_param("W"), last.get_param("b"))


def _dense_session(
    static: np.ndarray,
    maxouts: list[_Maxout],
    linear: tuple[np.ndarray, np.ndarray],
    lower: tuple[np.ndarray, np.ndarray, np.ndarray],
    upper: tuple[np.ndarray, np.ndarray],
) -> onnxruntime.InferenceSession:
    """The session of the dense layers' graph, read from the cache folder when it was built before.

    The graph depends only on the weights, so its file is named by their SHA-256 (and `GRAPH_VERSION`).
    Building it needs the `onnx` package (protobuf with it: 16 MiB of a server's memory); a server that
    finds the file (`make` builds it at install, as it builds the MiniLM model) never imports it.
    """
    import onnxruntime

    arrays = [static, *(a for m in maxouts for a in (m.weights, m.bias, m.gain, m.shift)), *linear, *lower, *upper]
    digest = hashlib.sha256(GRAPH_VERSION.encode())
    for array in arrays:
        contiguous = np.ascontiguousarray(array)
        digest.update(f"{contiguous.dtype}{contiguous.shape}".encode())
        digest.update(contiguous.data)
    path = default_cache_dir() / f"spacy-ner-dense-{digest.hexdigest()[:16]}.onnx"
    try:
        graph = path.read_bytes()
    except OSError:
        graph = _dense_graph(static, maxouts, linear, lower, upper)
        _write_atomically(path, graph)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.enable_cpu_mem_arena = False
    return onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])


def _write_atomically(path: Path, data: bytes) -> None:
    """Keep `data` at `path` for the next process; a cache folder that cannot be written only costs a rebuild."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        partial.write_bytes(data)
        os.replace(partial, path)
    except OSError:
        log.warning("the NER graph could not be cached in %s", path.parent)


def _dense_graph(
    static: np.ndarray,
    maxouts: list[_Maxout],
    linear: tuple[np.ndarray, np.ndarray],
    lower: tuple[np.ndarray, np.ndarray, np.ndarray],
    upper: tuple[np.ndarray, np.ndarray],
) -> bytes:
    """One ONNX graph from the embedded words to the precomputed affine layer's table and every word's
    closed-state scores: static vectors' projection, the mixing maxout, the window layers, the linear
    layer, the precomputed affine layer, then (next word, padding, padding) + bias, maxout, upper layer."""
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    weights: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        weights.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attributes: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], **attributes))
        return output

    def ints(name: str, *values: int) -> str:
        return const(name, np.array(values, dtype=np.int64))

    def dense(prefix: str, source: str, w: np.ndarray, b: np.ndarray | None) -> str:
        product = node("MatMul", [source, const(f"{prefix}.w", w)], f"{prefix}.mm")
        return product if b is None else node("Add", [product, const(f"{prefix}.b", b)], f"{prefix}.y")

    def maxout(prefix: str, source: str, out: int, pieces: int) -> str:
        grouped = node("Reshape", [source, ints(f"{prefix}.shape", -1, out, pieces)], f"{prefix}.z")
        return node("ReduceMax", [grouped], f"{prefix}.max", axes=[2], keepdims=0)

    def maxout_norm(prefix: str, source: str, layer: _Maxout) -> str:
        out, pieces, width = layer.weights.shape
        y = dense(prefix, source, layer.weights.reshape(out * pieces, width).T, layer.bias.reshape(out * pieces))
        gain, shift = const(f"{prefix}.g", layer.gain), const(f"{prefix}.s", layer.shift)
        return node("LayerNormalization", [maxout(prefix, y, out, pieces), gain, shift], f"{prefix}.out",
                    axis=-1, epsilon=_LAYER_NORM_EPSILON)

    axis0 = ints("axis0", 0)
    mixed = node("Concat", ["embedded", dense("static", "vectors", static.T, None)], "mixed", axis=1)
    # thinc pads the text with zero rows before the window layers, and those rows go through them too.
    x = node("Pad", [maxout_norm("mix", mixed, maxouts[0]), ints("pads", _WINDOW_PAD, 0, _WINDOW_PAD, 0)], "padded")
    for depth, layer in enumerate(maxouts[1:]):
        prefix = f"window{depth}"
        # seq2col with one word each side: [x[i-1], x[i], x[i+1]], zeros past the ends.
        edged = node("Pad", [x, ints(f"{prefix}.pads", 1, 0, 1, 0)], f"{prefix}.edged")
        before = node("Slice", [edged, ints(f"{prefix}.b0", 0), ints(f"{prefix}.b1", -2), axis0], f"{prefix}.before")
        after = node("Slice", [edged, ints(f"{prefix}.a0", 2), ints(f"{prefix}.a1", 2**62), axis0], f"{prefix}.after")
        columns = node("Concat", [before, x, after], f"{prefix}.cols", axis=1)
        x = node("Add", [x, maxout_norm(prefix, columns, layer)], f"{prefix}.res")
    words = node("Slice", [x, ints("text.begin", _WINDOW_PAD), ints("text.end", -_WINDOW_PAD), axis0], "words")
    linear_w, linear_b = linear
    tokvecs = dense("linear", words, linear_w.T, linear_b)
    lower_w, lower_pad, lower_b = lower
    features, hidden, pieces, width_in = lower_w.shape
    table = dense("lower", tokvecs, lower_w.reshape(features * hidden * pieces, width_in).T, None)
    node("Identity", [table], "table")
    # The closed state's features: feature 0 of the word, padding for features 1 and 2, in spaCy's order.
    first = node("Slice", [table, ints("f0.begin", 0), ints("f0.end", hidden * pieces), ints("axis1", 1)], "f0")
    pad = lower_pad.reshape(features, hidden * pieces)
    summed = node("Add", [node("Add", [first, const("pad1", pad[1])], "with.pad1"), const("pad2", pad[2])], "summed")
    biased = node("Add", [summed, const("lower.bias", lower_b.reshape(-1))], "closed.unmaxed")
    upper_w, upper_b = upper
    dense("upper", maxout("closed", biased, hidden, pieces), upper_w.T, upper_b)
    node("Identity", ["upper.y"], "closed")
    width = maxouts[0].gain.shape[0]
    graph = helper.make_graph(
        nodes,
        "spacy_ner_dense",
        [
            helper.make_tensor_value_info("embedded", TensorProto.FLOAT, [None, width * 4]),
            helper.make_tensor_value_info("vectors", TensorProto.FLOAT, [None, static.shape[1]]),
        ],
        [
            helper.make_tensor_value_info("table", TensorProto.FLOAT, [None, features * hidden * pieces]),
            helper.make_tensor_value_info("closed", TensorProto.FLOAT, [None, upper_b.shape[0]]),
        ],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()  # type: ignore[no-any-return]


FACTORY = "agentmem_greedy_ner"
# The name spaCy's own component keeps in the pipeline, disabled, once this one runs as "ner".
SPACY_NER = "spacy_ner"


def _make_component(nlp: Any, name: str, source: str) -> GreedyEntityRecognizer:
    return GreedyEntityRecognizer(nlp.get_pipe(source))


def use_greedy_recognizer(nlp: Any) -> bool:
    """Run ``nlp``'s entity recognition with :class:`GreedyEntityRecognizer` under the name ``ner``.

    spaCy's component stays in the pipeline, renamed ``spacy_ner`` and disabled: the new one reads its
    weights and hands it the docs it does not handle. Returns False, changing nothing, when the
    component is not the architecture reproduced here (another model folder).
    """
    from spacy.language import Language

    if not Language.has_factory(FACTORY):
        Language.factory(FACTORY, default_config={"source": SPACY_NER}, func=_make_component)
    try:
        GreedyEntityRecognizer(nlp.get_pipe("ner"))
    except UnsupportedModel:
        return False
    nlp.rename_pipe("ner", SPACY_NER)
    nlp.add_pipe(FACTORY, name="ner", after=SPACY_NER, config={"source": SPACY_NER})
    nlp.disable_pipe(SPACY_NER)
    return True

