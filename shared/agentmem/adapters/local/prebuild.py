"""`python -m agentmem.adapters.local.prebuild`: derive now what the local detector keeps in the cache folder.

The Makefile runs it at install, after building the MiniLM model: the NER graph (`entity_recognizer`) and
the word lists read out of Faker (`word_cache`). A server that finds them never imports `onnx` or Faker,
which would cost it about 45 MiB of memory; without this step its first request derives them instead.
"""

from __future__ import annotations

from agentmem.adapters.local.company_forms import company_forms
from agentmem.adapters.local.minilm_onnx import default_cache_dir
from agentmem.adapters.local.name_gazetteer import shared_gazetteer
from agentmem.adapters.local.spacy_pipeline import shared_pipeline
from agentmem.adapters.local.street_words import street_words


def main() -> None:
    ner = type(shared_pipeline().get_pipe("ner")).__name__
    gazetteer, streets, forms = shared_gazetteer(), street_words(), company_forms()
    print(f"{default_cache_dir()}: NER component {ner}, {len(gazetteer.first) + len(gazetteer.last)} names, "
          f"{len(streets.before) + len(streets.after)} street words, {len(forms)} company forms")


if __name__ == "__main__":
    main()
