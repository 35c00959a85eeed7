"""all-MiniLM-L6-v2 as an int8 ONNX model, built on this machine from the packaged safetensors weights.

Nothing is downloaded and torch is never needed: the BERT encoder is written out node by node with the
`onnx` package's helper API, exactly as `transformers.BertModel` computes it (post-layer-norm, exact erf
GELU), then `onnxruntime.quantization.quantize_dynamic` turns the weight matrices of its dense layers
and its word-embedding table into int8 (activations are quantised per call, hence "dynamic"). The
model's output is the last hidden state; mean pooling and normalisation stay with the embedder, in
numpy, where they are cheap.

Before quantising, the graph is smoothed (SmoothQuant): the outlier channels of BERT's activations,
found by running the float graph on a few calibration sentences, are scaled into the weights, and the 16
outlier channels of each layer's FFN down-projection stay float32 (see `kept_float_nodes`). Attention is
onnxruntime's fused `MultiHeadAttention` kernel (a contrib op of the CPU provider every onnxruntime
since 1.14 has).

The built file is kept in a cache folder, named by what it was built from (the weights' size and
modification time, the builder's version), and written under a temporary name then renamed, so two
processes racing to build it each end with a whole file.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import onnx

CACHE_DIR_ENV = "AGENTMEM_CACHE_DIR"
# Bump when the graph or the quantisation changes, so caches built by an older builder are not reused.
BUILDER_VERSION = 4
# ONNX opset 17: LayerNormalization is a standard op there, and every onnxruntime since 1.14 runs it.
_OPSET = 17
_CONTRIB_DOMAIN = "com.microsoft"
# The channels of each FFN down-projection's input kept float32 (the rest int8): the 16 with the largest
# calibration maxima. On the reference sentences, alone / in a batch, cosine to sentence-transformers:
# 0 kept 0.982 / 0.980, 4 kept 0.995 / 0.993, 16 kept 0.9967 / 0.9937, 64 kept 0.9963 / 0.9940, the
# whole down-projection float (builder 3) 0.9981 / 0.9939 (docs/embedding-runtime.md).
OUTLIER_CHANNELS = 16
INPUT_IDS = "input_ids"
ATTENTION_MASK = "attention_mask"
LAST_HIDDEN_STATE = "last_hidden_state"
# What `activation_maxima` runs the float model on: short and long, chat and logs, names and numbers.
CALIBRATION_TEXTS = (
    "How do I rotate the API key for the staging cluster?",
    "Ana Lopez moved to Lisbon in March and now works remotely.",
    "The deploy failed because the migration locked the orders table for twelve minutes.",
    "thanks!",
    "ok",
    "Please summarise yesterday's incident report in three bullet points, keeping the timeline.",
    "Our refund policy allows returns within 30 days of delivery, except for opened software.",
    "Can you book a table for four at 7pm near the office?",
    "ERROR 503: upstream connect error or disconnect/reset before headers",
    "The quick brown fox jumps over the lazy dog. " * 6,
)


def default_cache_dir() -> Path:
    """Where built models are kept: `AGENTMEM_CACHE_DIR`, else `$XDG_CACHE_HOME/agentmem`, else ~/.cache/agentmem."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentmem"


def model_path(model_dir: Path, cache_dir: Path, quantized: bool = True) -> Path:
    """The file the model of `model_dir` is (or will be) cached in, int8 unless `quantized` is False."""
    weights = (model_dir / "model.safetensors").stat()
    config = (model_dir / "config.json").read_bytes()
    key = f"{model_dir.resolve()}|{weights.st_size}|{weights.st_mtime_ns}|{BUILDER_VERSION}".encode() + config
    precision = ("int8" if _signed_weights() else "uint8") if quantized else "float32"
    return cache_dir / f"all-MiniLM-L6-v2-{precision}-{hashlib.sha256(key).hexdigest()[:16]}.onnx"


def ensure_model(model_dir: Path, cache_dir: Path | None = None, *, quantized: bool = True) -> Path:
    """The cached model of `model_dir`, built first if it is not there yet (int8: about 5 s, once)."""
    target = model_path(model_dir, cache_dir or default_cache_dir(), quantized)
    if target.is_file():
        return target
    import onnx

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as scratch:
        float_path = Path(scratch) / "float32.onnx"
        model = build_float_model(model_dir)
        if quantized:
            model = build_float_model(model_dir, activation_maxima(model, model_dir))
        onnx.save_model(model, str(float_path))
        if quantized:
            built = Path(scratch) / "int8.onnx"
            layers = int(json.loads((model_dir / "config.json").read_text(encoding="utf-8"))["num_hidden_layers"])
            _quantize(float_path, built, layers)
        else:
            built = float_path
        os.replace(built, target)
    return target


def activation_maxima(model: onnx.ModelProto, model_dir: Path) -> dict[str, np.ndarray]:
    """The largest |value| of each channel of each dense layer's input, over `CALIBRATION_TEXTS`.

    BERT's outlier channels are the same whatever the text (they are a property of the weights), so a few
    varied sentences find them; these are not the reference sentences the tests check the result on.
    """
    import onnx
    import onnxruntime
    from tokenizers import Tokenizer

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    weights = {initializer.name for initializer in probe.graph.initializer}
    inputs = sorted({n.input[0] for n in probe.graph.node if n.op_type == "MatMul" and n.input[1] in weights})
    probe.graph.output.extend(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None) for name in inputs)
    session = onnxruntime.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    maxima: dict[str, np.ndarray] = {}
    for text in CALIBRATION_TEXTS:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        outputs = session.run(inputs, {INPUT_IDS: ids, ATTENTION_MASK: np.ones_like(ids)})
        for name, output in zip(inputs, outputs, strict=True):
            channel_maxima = np.abs(output).reshape(-1, output.shape[-1]).max(axis=0)
            maxima[name] = np.maximum(maxima[name], channel_maxima) if name in maxima else channel_maxima
    return maxima


def kept_float_nodes(layers: int) -> list[str]:
    """The MatMul nodes left in float32: the `OUTLIER_CHANNELS` outlier channels of each FFN down-projection.

    The down-projection's input, GELU's output, is what one int8 scale per call resolves worst: a few
    channels reach 14-24 where the median channel peaks near 1 (layers 0-3). Those channels are computed
    in float32 and the other 1,520 in int8, whose scale they no longer set. Keeping the whole
    down-projection float (builder 3) cost 6 float products of 27 x 1536 x 384 per query, 1.3 ms of the
    4.6 ms one query took.
    """
    return [f"encoder.layer.{index}.output.outliers.matmul" for index in range(layers)]


def outlier_first_order(maxima: np.ndarray | None) -> np.ndarray | slice:
    """The FFN channels, the `OUTLIER_CHANNELS` with the largest calibration maxima first, then the others
    in their order; without maxima (the float32 graph) the channels as they are."""
    if maxima is None:
        return slice(None)
    outliers = np.argsort(-maxima, kind="stable")[:OUTLIER_CHANNELS]
    rest = np.setdiff1d(np.arange(len(maxima)), outliers)
    return np.concatenate([outliers, rest])


def _signed_weights() -> bool:
    """Whether the int8 weights are signed (onnxruntime's U8S8 kernels) on this machine: not on an x86 CPU
    without VNNI.

    There, U8S8 products go through AVX2's ``vpmaddubsw``, whose 16-bit sums saturate (onnxruntime's
    quantisation guide): on an AMD EPYC (family 25, AVX2, no VNNI) a text's vector in one padded batch fell to
    cosine 0.974 of the same text alone, and the reference batch to 0.982 of sentence-transformers. Unsigned
    weights (U8U8) do not saturate: 0.991 and 0.994 there, for 30% more time per query (2.5 -> 3.2 ms). CPUs
    with VNNI (AVX-512 VNNI or AVX-VNNI) and ARM keep U8S8. The choice is part of the cached file's name.
    """
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686"):
        return True
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False  # no way to tell: the type that cannot saturate
    return "avx512_vnni" in flags or "avx_vnni" in flags


def _quantize(float_path: Path, int8_path: Path, layers: int) -> None:
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        float_path,
        int8_path,
        # The dense layers (the attention products have no constant operand, so they stay float) and the
        # word-embedding table: 45 MB of float32 that int8 makes 11, for 0.0006 of cosine at worst on the
        # reference sentences, and a lookup costs the same either way.
        op_types_to_quantize=["MatMul", "Gather"],
        nodes_to_exclude=kept_float_nodes(layers),
        per_channel=True,
        weight_type=QuantType.QInt8 if _signed_weights() else QuantType.QUInt8,
        # ONNX's shape inference does not type the contrib MultiHeadAttention's output: it is float.
        extra_options={"DefaultTensorType": TensorProto.FLOAT},
    )


def build_float_model(model_dir: Path, activation_maxima: dict[str, np.ndarray] | None = None) -> onnx.ModelProto:
    """The float32 BERT encoder of `model_dir` as an ONNX graph: (input_ids, attention_mask) -> last_hidden_state.

    With `activation_maxima` (the largest |value| of each channel of each dense layer's input, keyed by the
    input's name, see `activation_maxima`) the graph is smoothed for int8 (SmoothQuant, Xiao et al. 2023):
    each input channel j is divided by s_j = sqrt(max |x_j| / max |w_j|) and the weight row j multiplied by
    it, which leaves the product unchanged in exact arithmetic and moves the few outlier channels of BERT's
    activations into the weights, quantised per output channel, where they cost little precision.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    if (config.get("hidden_act"), config.get("position_embedding_type", "absolute")) != ("gelu", "absolute"):
        raise ValueError(f"unsupported BERT variant in {model_dir / 'config.json'}")
    tensors = load_file(str(model_dir / "model.safetensors"))
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in tensors else ""
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head_size = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))

    nodes: list[onnx.NodeProto] = []
    initializers: list[onnx.TensorProto] = []

    def constant(name: str, value: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(value, name))
        return name

    def weight(name: str) -> np.ndarray:
        return np.ascontiguousarray(tensors[prefix + name], dtype=np.float32)

    def node(op: str, inputs: list[str], output: str, **attributes: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attributes))
        return output

    def matrix(name: str, scale: float = 1.0) -> np.ndarray:
        # torch Linear stores (out, in); MatMul wants (in, out).
        return weight(f"{name}.weight").T * np.float32(scale)

    def smoothed(
        x: str, matrices: list[np.ndarray], maxima_of: dict[str, np.ndarray] | None = None
    ) -> tuple[str, np.ndarray]:
        """`x` divided per channel by the smoothing factors of the layers reading it, and those factors."""
        maxima_of = maxima_of if maxima_of is not None else activation_maxima
        maxima = maxima_of.get(x) if maxima_of else None
        if maxima is None:
            return x, np.ones(matrices[0].shape[0], dtype=np.float32)
        weight_maxima = np.max([np.abs(m).max(axis=1) for m in matrices], axis=0)
        factors = np.sqrt(np.maximum(maxima, 1e-5) / np.maximum(weight_maxima, 1e-5)).astype(np.float32)
        return node("Mul", [x, constant(f"{x}.smoothing", 1.0 / factors)], f"{x}.smoothed"), factors

    def dense(x: str, factors: np.ndarray, name: str, out: str, weights: np.ndarray, scale: float = 1.0) -> str:
        return dense_weights(x, factors, name, out, weights, weight(f"{name}.bias") * np.float32(scale))

    def dense_weights(x: str, factors: np.ndarray, name: str, out: str, weights: np.ndarray, bias: np.ndarray) -> str:
        smoothed_weights = constant(f"{name}.weight", np.ascontiguousarray(weights * factors[:, None]))
        return node("Add", [node("MatMul", [x, smoothed_weights], f"{out}.matmul"), constant(f"{name}.bias", bias)],
                    out)

    def linear(x: str, name: str, out: str) -> str:
        weights = matrix(name)
        x, factors = smoothed(x, [weights])
        return dense(x, factors, name, out, weights)

    def layer_norm(x: str, name: str, out: str) -> str:
        return node(
            "LayerNormalization",
            [x, constant(f"{name}.weight", weight(f"{name}.weight")), constant(f"{name}.bias", weight(f"{name}.bias"))],
            out,
            axis=-1,
            epsilon=eps,
        )

    int64 = np.int64
    constant("axes.1", np.array([1], dtype=int64))
    constant("zero", np.array([0], dtype=int64))
    constant("one.f", np.array(1.0, dtype=np.float32))
    constant("half.f", np.array(0.5, dtype=np.float32))
    constant("sqrt2.f", np.array(np.sqrt(2.0), dtype=np.float32))

    # Embeddings: the word vector, plus position and token-type rows (type 0 is the only one a single
    # sentence uses, so it is folded into the position table once, here).
    words = node("Gather", [constant("word_embeddings", weight("embeddings.word_embeddings.weight")), INPUT_IDS],
                 "embeddings.words")
    positions_table = weight("embeddings.position_embeddings.weight") + weight(
        "embeddings.token_type_embeddings.weight"
    )[0]
    length = node("Gather", [node("Shape", [INPUT_IDS], "input.shape"), "axes.1"], "input.length")
    positions = node("Slice", [constant("position_embeddings", positions_table), "zero", length, "zero"],
                     "embeddings.positions")
    states = layer_norm(node("Add", [words, positions], "embeddings.sum"), "embeddings.LayerNorm", "embeddings")

    # The keys a query may attend to: 1 for a token, 0 for padding (onnxruntime's key padding mask).
    key_padding = node("Cast", [ATTENTION_MASK], "mask.int32", to=TensorProto.INT32)

    for index in range(int(config["num_hidden_layers"])):
        name = f"encoder.layer.{index}"
        # The 1/sqrt(head size) of the scores is folded into the query projection (so the attention's own
        # scale is 1).
        query_scale = 1.0 / np.sqrt(head_size)
        projections = [f"{name}.attention.self.{part}" for part in ("query", "key", "value")]
        weights = [matrix(projections[0], query_scale), matrix(projections[1]), matrix(projections[2])]
        source, factors = smoothed(states, weights)
        query = dense(source, factors, projections[0], f"{name}.q", weights[0], query_scale)
        key = dense(source, factors, projections[1], f"{name}.k", weights[1])
        value = dense(source, factors, projections[2], f"{name}.v", weights[2])
        # softmax(q k^T + mask) v per head, heads split and merged inside: onnxruntime's fused kernel
        # (com.microsoft MultiHeadAttention) in place of 12 nodes a layer, whose per-node cost dominated
        # a one-query call. Padding keys get -10000 before the softmax, which leaves them weight 0.
        context = f"{name}.context"
        nodes.append(helper.make_node(
            "MultiHeadAttention", [query, key, value, "", key_padding], [context], name=context,
            domain=_CONTRIB_DOMAIN, num_heads=heads, scale=1.0,
        ))
        attended = linear(context, f"{name}.attention.output.dense", f"{name}.attended")
        states = layer_norm(node("Add", [attended, states], f"{name}.attention.residual"),
                            f"{name}.attention.output.LayerNorm", f"{name}.attention.out")

        up_weights = matrix(f"{name}.intermediate.dense")
        up_bias = weight(f"{name}.intermediate.dense.bias")
        down_weights = matrix(f"{name}.output.dense")
        gelu_maxima = activation_maxima.get(f"{name}.gelu") if activation_maxima else None
        # The FFN's channels reordered so the outlier ones come first (the same permutation of the
        # up-projection's columns and the down-projection's rows leaves the layer's function unchanged).
        order = outlier_first_order(gelu_maxima)
        up_source, up_factors = smoothed(states, [up_weights])
        up = dense_weights(up_source, up_factors, f"{name}.intermediate.dense", f"{name}.intermediate",
                           up_weights[:, order], up_bias[order])
        # Exact GELU, x * (1 + erf(x / sqrt 2)) / 2, written as torch exports it so onnxruntime fuses it.
        erf = node("Erf", [node("Div", [up, "sqrt2.f"], f"{name}.gelu.scaled")], f"{name}.gelu.erf")
        gelu = node("Mul", [node("Mul", [up, node("Add", [erf, "one.f"], f"{name}.gelu.plus1")], f"{name}.gelu.x"),
                            "half.f"], f"{name}.gelu")
        down_weights = down_weights[order]
        down_bias = constant(f"{name}.output.dense.bias", weight(f"{name}.output.dense.bias"))
        if gelu_maxima is None:
            down = node("Add", [node("MatMul", [gelu, constant(f"{name}.output.dense.weight", down_weights)],
                                     f"{name}.output.matmul"), down_bias], f"{name}.output")
        else:
            # The few outlier channels stay float (a 27 x k x 384 product costs little); the rest, their
            # per-call scale no longer set by the outliers, is int8 (LLM.int8()'s decomposition, static).
            kept = OUTLIER_CHANNELS
            outliers, rest = f"{name}.gelu.outliers", f"{name}.gelu.rest"
            sizes = constant(f"{name}.gelu.split", np.array([kept, up_weights.shape[1] - kept], dtype=int64))
            nodes.append(helper.make_node("Split", [gelu, sizes], [outliers, rest], name=f"{name}.gelu.split", axis=-1))
            rest_maxima = {rest: gelu_maxima[order][kept:]}
            rest_source, rest_factors = smoothed(rest, [down_weights[kept:]], rest_maxima)
            float_part = node("MatMul", [outliers, constant(f"{name}.output.dense.weight.outliers",
                                                             np.ascontiguousarray(down_weights[:kept]))],
                              f"{name}.output.outliers.matmul")
            int8_part = node("MatMul", [rest_source, constant(f"{name}.output.dense.weight", np.ascontiguousarray(
                down_weights[kept:] * rest_factors[:, None]))], f"{name}.output.matmul")
            down = node("Add", [node("Add", [float_part, int8_part], f"{name}.output.sum"), down_bias],
                        f"{name}.output")
        states = layer_norm(node("Add", [down, states], f"{name}.output.residual"), f"{name}.output.LayerNorm",
                            f"{name}.out")
    nodes.append(helper.make_node("Identity", [states], [LAST_HIDDEN_STATE], name=LAST_HIDDEN_STATE))

    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info(INPUT_IDS, TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info(ATTENTION_MASK, TensorProto.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info(LAST_HIDDEN_STATE, TensorProto.FLOAT, ["batch", "sequence", hidden])],
        initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", _OPSET), helper.make_opsetid(_CONTRIB_DOMAIN, 1)],
        producer_name="agentmem",
    )
    # onnxruntime 1.14+ reads IR version 8; the helper stamps the newest the onnx package knows.
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    # `python -m agentmem.adapters.local.minilm_onnx`: build the int8 model now (the Makefile does, at
    # install), so the first `embed` of a server does not pay for it.
    from agentmem.adapters.local.minilm import default_model_dir

    print(ensure_model(default_model_dir()))
