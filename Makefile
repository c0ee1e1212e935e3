# Two entry points, each creating its own virtual environment from nothing but Python 3.11 and pip.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-fast test-eco bench lint docs clean soak

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $@

## demo: set up, train the quickstart config briefly, print its evaluation beside the shipped checkpoint
demo: $(VENV)/.installed
	$(BIN)/python -m training.tools.quickstart

# The tests keep their bytecode (and pytest its rewritten test modules) in __pycache__, ignored by git, even where
# PYTHONDONTWRITEBYTECODE is set: compiling them again costs each pytest process about 6 s of CPU (docs/testing.md).
KEEP_BYTECODE := PYTHONDONTWRITEBYTECODE=

## test: set up and run the whole test suite (the 20 slowest tests listed at the end)
test: $(VENV)/.installed
	$(KEEP_BYTECODE) $(BIN)/python -m pytest -q -n 2 --durations=20

## test-fast: the suite without the tests marked slow (in the code, or measured over 0.15 s: tests/slow_tests.txt), for day-to-day work
test-fast: $(VENV)/.installed
	$(KEEP_BYTECODE) $(BIN)/python -m pytest -q -n 2 -m "not slow"

## test-eco: the ecosystem tests (Ray RLlib, Tianshou, AgileRL) in .venv-eco, whose pins differ from .venv's
ECO := .venv-eco
$(ECO)/.installed: pyproject.toml
	$(PYTHON) -m venv $(ECO)
	$(ECO)/bin/python -m pip install -q --upgrade pip
	$(ECO)/bin/python -m pip install -q torch==2.13.0
	$(ECO)/bin/python -m pip install -q -e ".[eco]"
	touch $@

test-eco: $(ECO)/.installed
	$(ECO)/bin/python -m pytest -q -n 2 tests/test_ecosystem.py tests/test_ecosystem_rllib.py tests/test_ecosystem_rllib_example.py \
	    tests/test_ecosystem_tianshou.py tests/test_ecosystem_agilerl.py tests/test_ecosystem_torchrl.py tests/test_ecosystem_ray_cluster.py \
	    tests/test_env.py tests/test_single_agent.py

## bench: engine, env and batched engine speed side by side with RLCard and OpenSpiel (installs the bench extra into the venv)
bench: $(VENV)/.installed
	$(BIN)/python -m pip install -q -e ".[bench]"
	$(BIN)/python -m benchmarks.bench_engine
	$(BIN)/python -m benchmarks.bench_env
	$(BIN)/python -m benchmarks.bench_batched

## docs: build the documentation site into docs/_build/html (warnings are errors); open docs/_build/html/index.html
docs: $(VENV)/.installed
	$(BIN)/python -m sphinx -q -W --keep-going -b html docs docs/_build/html

## soak: each soak family (tests/soak/) for SOAK_SECONDS seconds (saves, replays, configs, checkpoints, web, training)
SOAK_SECONDS ?= 60
soak: $(VENV)/.installed
	for family in saves replays configs checkpoints web training; do \
	    OMP_NUM_THREADS=1 $(BIN)/python -m tests.soak.soak_$$family --seconds $(SOAK_SECONDS) || exit 1; done

## lint: ruff and mypy --strict
lint: $(VENV)/.installed
	$(BIN)/python -m ruff check uno_env agents training uno_app tests benchmarks examples
	$(BIN)/python -m mypy

clean:
	rm -rf $(VENV) build *.egg-info docs/_build
