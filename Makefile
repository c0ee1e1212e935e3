# Two entry points, each creating its own virtual environment from nothing but Python 3.11 and pip.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-fast bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $@

## demo: set up, train the quickstart config briefly, print its evaluation beside the shipped checkpoint
demo: $(VENV)/.installed
	$(BIN)/python -m training.quickstart

## test: set up and run the whole test suite
test: $(VENV)/.installed
	$(BIN)/python -m pytest -q -n 2

## test-fast: the suite without the tests marked slow (under a minute on 2 cores), for day-to-day work
test-fast: $(VENV)/.installed
	$(BIN)/python -m pytest -q -n 2 -m "not slow"

## bench: engine speed side by side with RLCard (installs rlcard==1.2.0 into the venv)
bench: $(VENV)/.installed
	$(BIN)/python -m pip install -q -e ".[bench]"
	$(BIN)/python -m benchmarks.bench_engine
	$(BIN)/python -m benchmarks.bench_env

lint: $(VENV)/.installed
	$(BIN)/python -m ruff check uno_env agents training uno_app tests benchmarks
	$(BIN)/python -m mypy

clean:
	rm -rf $(VENV) build *.egg-info
