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
