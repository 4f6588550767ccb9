# taskgui developer entry points. Everything runs from a project-local virtualenv that is
# created and populated on first use, so a fresh clone needs only Python 3.11+ and make.

PYTHON ?= python3.11
FALLBACK_PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
# Touched after a successful install; rebuilt whenever pyproject.toml changes.
STAMP := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help install run test lint format bench clean distclean

help:
	@echo "make run        start taskgui (creates $(VENV) on first use)"
	@echo "make test       lint, type-check and run the test suite headless"
	@echo "make lint       ruff check, ruff format --check, mypy"
	@echo "make format     apply ruff fixes and formatting"
	@echo "make bench      run every benchmarks/bench_*.py"
	@echo "make clean      remove caches and build output (keeps $(VENV))"
	@echo "make distclean  clean, and remove $(VENV) too"

$(PY):
	@py="$$(command -v $(PYTHON) || command -v $(FALLBACK_PYTHON))" \
		|| { echo "error: neither $(PYTHON) nor $(FALLBACK_PYTHON) found" >&2; exit 1; }; \
	"$$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "error: $$py is older than Python 3.11" >&2; exit 1; }; \
	echo "creating $(VENV) with $$py"; \
	"$$py" -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -e '.[dev]'
	@touch $@

install: $(STAMP)

run: $(STAMP)
	$(PY) -m taskgui

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	QT_QPA_PLATFORM=offscreen $(BIN)/pytest

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(STAMP)
	@set -e; found=0; \
	for script in benchmarks/bench_*.py; do \
		[ -e "$$script" ] || continue; \
		found=1; echo "== $$script"; \
		QT_QPA_PLATFORM="$${QT_QPA_PLATFORM:-offscreen}" $(PY) "$$script"; \
	done; \
	[ "$$found" = 1 ] || echo "no benchmarks/bench_*.py scripts yet"

clean:
	rm -rf build dist .mypy_cache .ruff_cache .pytest_cache .hypothesis screenshots
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name '*.egg-info' \) \
		-type d -print -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
