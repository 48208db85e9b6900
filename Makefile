# Two commands on a fresh machine with only python3: `make demo` and `make test`.
# Both create/reuse the virtual environment .venv/ and install what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
# torch is pinned and installed first: an unpinned torch may pull a multi-GB CUDA build
TORCH := torch==2.13.0

.PHONY: demo test sync readme bench clean-venv

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	rm -f $(VENV)/.installed-*
	touch $@

demo: $(STAMP)
	$(BIN)/acd demo --out _reports/demo

# notebooks (nbdev-test; experiment notebooks excluded: pytest runs them through papermill), then
# pytest, which also fails when nbdev-export / nbdev-clean would change anything. One torch thread per
# process: oversubscribed cores slow torch down ~100x (nbdev-test runs two notebooks at a time).
test: $(STAMP)
	OMP_NUM_THREADS=1 $(BIN)/nbdev-test --skip-file-re '^exp_' --n-workers 2
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q

# after editing notebooks: export the library, clean the notebooks, regenerate README.md
sync: $(STAMP)
	$(BIN)/nbdev-export
	$(BIN)/nbdev-clean
	$(BIN)/python tools/make_readme.py

readme: $(STAMP)
	$(BIN)/python tools/make_readme.py

bench: $(STAMP)
	$(BIN)/python bench/bench_sims.py

clean-venv:
	rm -rf $(VENV)
