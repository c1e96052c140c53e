# The two commands a fresh machine needs (see README.md):
#   make example   set up .venv and evaluate the bundled example dataset with the demo judge
#   make test      set up .venv with test dependencies and run the test suite
.PHONY: example test setup setup-test clean

OUT ?= localeval-out/example
PYTEST_ARGS ?=

setup:
	bash scripts/setup.sh

setup-test:
	bash scripts/setup.sh test

example: setup
	.venv/bin/localeval run example --judge demo -o $(OUT)

test: setup-test
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf localeval-out .pytest_cache
