"""bench/bench_baselines.py takes any baseline's options from the command line, and refuses ones it cannot use;
bench/bench_ensemble.py runs end to end on the CPU, so that a device call never meets its first error there."""
import subprocess
import sys

import pytest

from conftest import ROOT

BENCH = [sys.executable, str(ROOT / "bench" / "bench_baselines.py"), "--n-samples", "2", "--netsim-subjects", "0",
         "--threads", "1"]


def bench(*args):
    return subprocess.run([*BENCH, *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_method_args_reach_the_baseline():
    res = bench("--methods", "mi", "linear_granger", "--method-args", '{"linear_granger": {"max_lag": 4}}')
    assert res.returncode == 0, res.stderr
    assert "kuramoto_f1_linear_granger_auroc:" in res.stdout and "kuramoto_f1_mi_lag0_auroc:" in res.stdout


@pytest.mark.parametrize("method_args, message", [
    ('{"ngc": {"bogus": 1}}', "--method-args for ngc: NeuralGranger.__init__() got an unexpected keyword argument 'bogus'"),
    ('{"esru": {}}', "--method-args names ['esru'], which are not among the methods run: ['mi', 'ngc']"),
    ('{"ngc": {"hidden": 0}}', "--method-args for ngc: n_lags, hidden and n_iter must be >= 1"),
    ("[1]", "--method-args must be a JSON object of objects, got [1]")])
def test_method_args_errors_name_the_problem(method_args, message):
    res = bench("--methods", "mi", "ngc", "--method-args", method_args)
    assert res.returncode == 2 and message in res.stderr, res.stderr
    assert "_auroc:" not in res.stdout, "a bad option must stop the run before any method is fitted"


def test_bench_ensemble_prints_its_lines():
    "bench/bench_ensemble.py, the first phase of a device call, runs end to end on the CPU (one step per epoch)."
    cmd = [sys.executable, str(ROOT / "bench" / "bench_ensemble.py"), "--models", "springs_mlp", "--ks", "1", "--steps", "1",
           "--threads", "1", "--profile-k", "2", "--profile-compile", "off", "--profile-models", "springs_mlp",
           "--stack", "on", "--dtype", "fp32"]  # fp32: bf16 computes as fp32 where it is not native, which doubles the bytes
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert res.returncode == 0, res.stderr
    lines = dict(line.split(": ", 1) for line in res.stdout.splitlines() if ": " in line)
    assert float(lines["springs_mlp_gflop_per_sample"]) == pytest.approx(0.634, abs=1e-3)
    assert 40 < float(lines["springs_mlp_unfused_mb_per_sample"]) < 75  # 56.3 measured (bf16 where native: 31.9)
    assert float(lines["springs_mlp_k1_samples_per_s"]) > 0
    assert float(lines["springs_mlp_k2_profile_ms_per_step"].split()[0]) > 0
    profiled = [line for line in res.stdout.splitlines() if line.startswith("springs_mlp_k2_profile: ")]
    assert len(profiled) == 20 and "aten::" in profiled[0], res.stdout
