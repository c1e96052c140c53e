# The two commands a fresh machine needs (see README.md):
#   make example   set up .venv and evaluate the bundled example dataset with the demo judge:
#                  every metric family on a sample of the example (a few minutes);
#                  make example FULL=1 for all 40 samples
#   make test      set up .venv with test dependencies and run the test suite
#   make test-fast the suite without model-loading and slow tests (under 2 minutes)
#   make lint      ruff and mypy over localeval/
.PHONY: example test test-fast lint setup setup-test clean

OUT ?= localeval-out/example
# The first run shows the pipeline in minutes: EXAMPLE_SAMPLE samples drawn per language
# (--sample, recorded in the signature) and one known-answer pair per judge metric in
# the judge check (a fresh cache pays it before the first judge call; four pairs
# per metric would cost the demo judge more than the samples). FULL=1 scores the
# whole example with the usual judge check.
EXAMPLE_SAMPLE ?= 3
EXAMPLE_ARGS = $(if $(FULL),,--sample $(EXAMPLE_SAMPLE) --judge-check-pairs 1)
PYTEST_ARGS ?=

setup:
	bash scripts/setup.sh

setup-test:
	bash scripts/setup.sh test

example: setup
	.venv/bin/localeval run example --judge demo $(EXAMPLE_ARGS) -o $(OUT)

test: setup-test
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python -m pytest $(PYTEST_ARGS)

# The fast lane: tests/conftest.py marks tests that load a model (`model`) and slow
# ones (`slow`); leave those out. Subprocess tests stay in: -m "not subprocess" drops them too.
test-fast: setup-test
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python -m pytest -q -m "not model and not slow" $(PYTEST_ARGS)

lint: setup-test
	.venv/bin/ruff check localeval
	.venv/bin/mypy localeval

clean:
	rm -rf localeval-out .pytest_cache
