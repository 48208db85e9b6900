"""The notebooks and tests that use a shipped or a bf16 model, run again with native bf16 switched off.

`ONEDNN_MAX_CPU_ISA=AVX2` holds oneDNN, which computes torch's bf16 matrix products on a CPU, to AVX2: measured on
an EPYC (Zen 4) a bf16 product then falls from 200 to 2.4 GFLOP/s, as on a processor with AVX2 only. A CI machine
with native bf16 (a Xeon with AMX, a Zen 4 EPYC) would otherwise never show what a user without it meets: a bf16
model stepped in emulation, 15 times slower than in float32 (in the last round, a cell past nbdev's time limit).
`acd_nb.core.native_bf16` reads the same variable, so here the shipped bf16 springs model must compute in float32.
On a processor without native bf16 the suite's own runs of these notebooks and tests are already that check, so they
are not run twice there."""
import os
import subprocess
import sys

import pytest

from acd_nb.core import native_bf16
from conftest import BIN, ROOT

CAPPED = {**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX2", "OMP_NUM_THREADS": "1"}
# the notebooks that load a shipped model (the springs one is bf16) or infer with one through the command line
NOTEBOOKS = ["15_infer", "40_commands", "41_pretrained"]
# uncapped, this processor computes bf16 as the capped one does: test_notebooks.py and test_pretrained.py run these
rerun = pytest.mark.skipif(not native_bf16(), reason="no native bf16 here: the uncapped runs of the suite are this check")


def test_a_bf16_model_computes_in_fp32_without_native_bf16():
    code = ("from acd_nb.pretrained import load_model; from acd_nb.core import precision_info; "
            "m = load_model('springs'); print(m.model.cfg.dtype, m.model.compute_dtype(), precision_info()['native_bf16'])")
    res = subprocess.run([sys.executable, "-c", code], env=CAPPED, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["bf16", "fp32", "False"]


@rerun
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_passes_without_native_bf16(name):
    res = subprocess.run([str(BIN / "nbdev-test"), f"nbs/{name}.ipynb"], env=CAPPED, capture_output=True,
                         text=True, cwd=ROOT, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]


@rerun
def test_shipped_models_match_their_cards_without_native_bf16():
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                          "tests/test_pretrained.py", "-k", "shipped"], env=CAPPED, capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
