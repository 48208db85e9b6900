import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT / "tools"))  # build_docs, make_reports, decoder_graph_check


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    "Tests never write datasets into the user's real cache."
    if "ACD_DATA_DIR" not in os.environ:
        monkeypatch.setenv("ACD_DATA_DIR", str(tmp_path_factory.getbasetemp() / "acd_data"))


# The tests that run a notebook or an experiment take most of the suite's minutes. `make test`'s pytest-xdist
# (`-n 2 --dist worksteal`) hands each worker one half of the collection and lets an idle one take the tail of the
# other's queue, so each half starts with every other of them and ends on quick tests: the workers end together
# (about a minute sooner than in collection order, simulated from the tests' durations).
RUN_NOTEBOOKS = ("tests/test_notebooks.py::", "tests/test_experiments.py::", "tests/test_exp_")


def pytest_collection_modifyitems(items):
    heavy = [item for item in items if item.nodeid.startswith(RUN_NOTEBOOKS)]
    light = [item for item in items if not item.nodeid.startswith(RUN_NOTEBOOKS)]
    first, second = heavy[0::2], heavy[1::2]
    cut = max(0, len(items) // 2 - len(first))
    items[:] = first + light[:cut] + second + light[cut:]
