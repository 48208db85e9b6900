# Two commands on a fresh machine with only python3: `make demo` and `make test`.
# Both create/reuse the virtual environment .venv/ and install what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HASH := $(shell cksum pyproject.toml | cut -d' ' -f1)
STAMP := $(VENV)/.installed-run-$(HASH)
DEV_STAMP := $(VENV)/.installed-dev-$(HASH)
# torch is pinned and installed first: an unpinned torch may pull a multi-GB CUDA build
TORCH := torch==2.13.0

.PHONY: demo test sync readme bench clean-venv docs lab reports

# the package alone (what `make demo` needs), then the development tools (tests, docs, JupyterLab)
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e .
	rm -f $(VENV)/.installed-run-*
	touch $@

$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	rm -f $(VENV)/.installed-dev-*
	touch $@

# one torch thread: a little slower on a quiet machine, but two threads beside any other busy process
# oversubscribe the cores and slow torch down many times over
demo: $(STAMP)
	OMP_NUM_THREADS=1 $(BIN)/acd demo --out _reports/demo

# the pytest suite in two processes (pytest-xdist), the notebooks' own tests among them (tests/test_notebooks.py runs
# each library notebook into the docs build's cache; the experiment tests keep their runs as the experiments' pages),
# then the docs build (tests/test_docs.py), which renders those executed copies. The suite also fails when
# nbdev-export / nbdev-clean would change anything. One torch thread per process: oversubscribed cores slow torch
# down ~100x.
test: $(DEV_STAMP)
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n 2 --dist worksteal --ignore tests/test_docs.py
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q tests/test_docs.py

# after editing notebooks: export the library, clean the notebooks, regenerate README.md
sync: $(DEV_STAMP)
	$(BIN)/nbdev-export
	$(BIN)/nbdev-clean
	$(BIN)/python tools/make_readme.py

readme: $(DEV_STAMP)
	$(BIN)/python tools/make_readme.py

# the committed reports reports/$(SCALE)/<experiment>/ (executed notebook, results.json with the paper's claims,
# figures): the experiment notebooks at `cpu` scale, two side by side with one torch thread each, then the README's
# claims table. Trained models stay in _reports/ and are reused, so a rerun continues where the last one stopped.
# One experiment: `make reports EXPERIMENTS=exp_kuramoto`.
SCALE ?= cpu
EXPERIMENTS ?=
reports: $(DEV_STAMP)
	$(BIN)/python tools/make_reports.py --scale $(SCALE) $(EXPERIMENTS)
	$(BIN)/python tools/make_readme.py

bench: $(STAMP)
	$(BIN)/python bench/bench_sims.py

clean-venv:
	rm -rf $(VENV)

# docs site in _site/, offline: tools/build_docs.py executes every notebook once (experiments at ci scale;
# executed copies cached in _docs_build/, rerun only when a notebook or the library changes) and renders
# them with MkDocs (nbdev-docs needs Quarto, which cannot be installed here). GitHub Pages deploys the same.
docs: $(DEV_STAMP)
	OMP_NUM_THREADS=1 $(BIN)/python tools/build_docs.py

# JupyterLab on 127.0.0.1:$(LAB_PORT) with a random token (printed in the URL), from .venv; the notebooks'
# kernel `python3` is .venv's python, and `acd_nb` ("Python (acd_nb)") is registered in .venv as well
LAB_PORT ?= 8888
lab: $(DEV_STAMP)
	$(BIN)/python -m ipykernel install --sys-prefix --name acd_nb --display-name "Python (acd_nb)"
	$(BIN)/jupyter lab --no-browser --ip 127.0.0.1 --port $(LAB_PORT) --ServerApp.port_retries=0 $(if $(filter 0,$(shell id -u)),--allow-root)
