"""Check that the greedy entity recognizer finds what spaCy's own NER finds, and times both.

For every text of pii-dev and of LoCoMo-dev (each turn and each question), in one process:

1. the entities (token start, end, label) and every token's IOB tag and type set by
   ``GreedyEntityRecognizer`` against spaCy's ``EntityRecognizer`` on the same tokens;
2. the full local detector's spans (``LocalPiiDetector.detect``: type, start, end, text, score) with the
   pipeline's ``ner`` as it runs by default (the greedy recognizer) against the same detector with
   spaCy's component enabled in its place.

``--save FILE`` writes the detector's spans of every text; ``--against FILE`` also compares them with
spans saved so by another version of the code (run it there with that version on PYTHONPATH: with no
greedy recognizer in the pipeline, step 1 and 2 are skipped and only the spans are saved).

Prints the counts, the first differences, and the CPU time per text of each recognizer; exits 1 on any
difference.

Run: .venv/bin/python scripts/check_ner_spans.py [--pii ../shared/eval/pii-dev.json]
     [--locomo ../shared/eval/locomo-dev.json] [--texts more.json ...] [--save F] [--against F]
(``--texts``: a JSON list of strings.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from agentmem.adapters.local.presidio_pii import LocalPiiDetector
from agentmem.adapters.local.spacy_pipeline import shared_pipeline
from agentmem.domain.pii import PiiSpan

_SHOWN = 5


def eval_texts(pii: Path | None, locomo: Path | None, extra: list[Path]) -> list[str]:
    """pii-dev's full texts, LoCoMo's turns and questions, then each extra file's strings."""
    texts: list[str] = []
    if pii is not None:
        texts += [record["full_text"] for record in json.loads(pii.read_text(encoding="utf-8"))]
    if locomo is not None:
        for sample in json.loads(locomo.read_text(encoding="utf-8")):
            for key, session in sample["conversation"].items():
                if key.startswith("session_") and isinstance(session, list):
                    texts += [turn["text"] for turn in session]
            texts += [qa["question"] for qa in sample["qa"]]
    for path in extra:
        texts += [str(text) for text in json.loads(path.read_text(encoding="utf-8"))]
    return texts


def _optional_path(value: str) -> Path | None:
    return Path(value) if value else None


def span_json(span: PiiSpan) -> list[object]:
    return [span.entity_type, span.start, span.end, span.value, span.score]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # An empty path leaves that file out (e.g. `--pii '' --locomo '' --texts mine.json`).
    parser.add_argument("--pii", type=_optional_path, default=Path("../shared/eval/pii-dev.json"))
    parser.add_argument("--locomo", type=_optional_path, default=Path("../shared/eval/locomo-dev.json"))
    parser.add_argument("--texts", type=Path, nargs="*", default=[])
    parser.add_argument("--save", type=Path, help="write the detector's spans of every text here (JSON)")
    parser.add_argument("--against", type=Path, help="compare the detector's spans with a --save file")
    args = parser.parse_args()
    texts = eval_texts(args.pii, args.locomo, args.texts)
    nlp = shared_pipeline()
    detector = LocalPiiDetector()
    by_default = [detector.detect(text) for text in texts]
    if args.save is not None:
        args.save.write_text(json.dumps([[span_json(s) for s in spans] for spans in by_default]), encoding="utf-8")
    failed = False
    if args.against is not None:
        saved = json.loads(args.against.read_text(encoding="utf-8"))
        now = [[span_json(s) for s in spans] for spans in by_default]
        moved = [(text, a, b) for text, a, b in zip(texts, saved, now, strict=True) if a != b]
        print(f"detector spans differing from {args.against}: {len(moved)} of {len(texts)} texts")
        for text, expected, got in moved[:_SHOWN]:
            print(f"  {text[:80]!r}\n    saved: {expected}\n    now:   {got}")
        failed = bool(moved)
    try:
        from agentmem.adapters.local.entity_recognizer import SPACY_NER, GreedyEntityRecognizer
    except ImportError:
        return 1 if failed else 0
    greedy = nlp.get_pipe("ner")
    if not isinstance(greedy, GreedyEntityRecognizer):
        print("the pipeline runs spaCy's own NER (another model?): nothing more to compare")
        return 1 if failed else 0
    spacy_ner = greedy.spacy_component

    entity_differences = []
    cpu = {"spaCy": 0.0, "greedy": 0.0}
    for text in texts:
        found = {}
        for name, component in (("spaCy", spacy_ner), ("greedy", greedy)):
            doc = nlp.make_doc(text)
            started = time.process_time()
            component(doc)
            cpu[name] += time.process_time() - started
            found[name] = ([(e.start, e.end, e.label_) for e in doc.ents], [(t.ent_iob_, t.ent_type_) for t in doc])
        if found["spaCy"] != found["greedy"]:
            entity_differences.append((text, found["spaCy"][0], found["greedy"][0]))

    nlp.disable_pipe("ner")
    nlp.enable_pipe(SPACY_NER)
    try:
        with_spacy = [detector.detect(text) for text in texts]
    finally:
        nlp.disable_pipe(SPACY_NER)
        nlp.enable_pipe("ner")
    span_differences = [(text, a, b) for text, a, b in zip(texts, with_spacy, by_default, strict=True) if a != b]

    print(f"{len(texts)} texts ({sum(len(spans) for spans in by_default)} detector spans)")
    print(f"entities differing: {len(entity_differences)}; detector spans differing: {len(span_differences)}")
    for text, expected, got in (entity_differences + span_differences)[:_SHOWN]:
        print(f"  {text[:80]!r}\n    spaCy:  {expected}\n    greedy: {got}")
    for name, seconds in cpu.items():
        print(f"CPU per text, {name} NER component: {seconds / len(texts) * 1000:.3f} ms")
    return 1 if failed or entity_differences or span_differences else 0


if __name__ == "__main__":
    sys.exit(main())
