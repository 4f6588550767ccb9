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
	@echo "make lint       ruff check, ruff format --check, mypy, import contracts"
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

# The postgres extra too: tests/store/postgres runs against the local server.
$(STAMP): pyproject.toml taskgui/__init__.py | $(PY)
	$(PY) -m pip install -e '.[dev,postgres]'
	@touch $@

install: $(STAMP)

run: $(STAMP)
	$(PY) -m taskgui

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

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

# ---------------------------------------------------------------- desktop and dist
# Desktop integration for the current user (XDG_DATA_HOME, default ~/.local/share) and
# a frozen one-folder build. Files live in packaging/; see packaging/README.md.
.PHONY: install-desktop uninstall-desktop dist dist-check

ICON_BUILD := build/icons/hicolor
# Touched once PyInstaller (the `dist` extra, build-only) is in the venv.
DIST_STAMP := $(VENV)/.dist-installed

# The entry's Exec= gets the absolute path of the venv's `taskgui`, which no launcher
# finds on PATH; the icon sizes are rendered from the package's SVG at install time.
install-desktop: $(STAMP)
	rm -rf $(ICON_BUILD)
	QT_QPA_PLATFORM=offscreen $(PY) packaging/linux/render_icons.py --out $(ICON_BUILD) >/dev/null
	$(PY) packaging/linux/desktop_install.py install --icons $(ICON_BUILD) \
		--exec "$$(cd $(BIN) && pwd)/taskgui"

# Standard library only, so it also works once the venv is gone.
uninstall-desktop:
	@py=$(PY); [ -x "$$py" ] || py="$$(command -v python3)"; \
	"$$py" packaging/linux/desktop_install.py uninstall

$(DIST_STAMP): $(STAMP)
	$(PY) -m pip install -e '.[dev,postgres,dist]'
	@touch $@

dist: $(DIST_STAMP)
	rm -rf dist/taskgui build/pyinstaller
	$(BIN)/pyinstaller --noconfirm --clean --log-level WARN --distpath dist \
		--workpath build/pyinstaller packaging/pyinstaller/taskgui.spec
	@du -sh dist/taskgui

dist-check:
	packaging/pyinstaller/check_dist.sh dist/taskgui/taskgui

# ------------------------------------------------------------------ screenshots
# PNGs of the real app on a demo schedule, taken under a private Xvfb (skipped with a
# message when Xvfb is missing); see scripts/screenshots.py.
.PHONY: screenshots
screenshots: $(STAMP)
	$(PY) scripts/screenshots.py --out docs/screenshots
