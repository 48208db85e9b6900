"""tools/pack_runs.py: runs packed on a GPU machine (optimiser moments in bf16, in size-capped volumes) unpack here,
whole, and resume."""
import subprocess
import sys

import pytest
import torch

from conftest import ROOT
from acd_nb.core import get_preset, seed_everything
from acd_nb.model import ACD, ACDConfig
from acd_nb.train import TrainConfig, fit, load_checkpoint

TOOL = [sys.executable, str(ROOT / "tools" / "pack_runs.py")]


def tiny():
    seed_everything(0)
    return ACD.from_config(ACDConfig(n_features=4, n_steps=12, hidden=64))  # weights, not headers, fill its files


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    "Three one-epoch run folders under `runs`, and their data"
    root = tmp_path_factory.mktemp("pack")
    x = torch.randn(64, 3, 12, 4)
    edges = torch.randint(0, 2, (64, 3, 3)).float() * (1 - torch.eye(3))
    cfg = TrainConfig.from_preset(get_preset("ci"), epochs=1, progress=False)
    for name in ("a_seed0", "a_seed1", "a_seed2"): fit(tiny(), (x, edges), (x, edges), cfg, root / "runs" / name)
    return root, (x, edges)


def test_packed_runs_unpack_whole_and_resume(trained, tmp_path):
    root, data = trained
    subprocess.run(TOOL + [str(root / "runs"), str(tmp_path / "back")], check=True)
    packed = sorted(tmp_path.glob("back_*.tar"))
    assert [p.name for p in packed] == ["back_1.tar"]  # three small runs: one volume
    refused = subprocess.run(TOOL + [str(root / "runs"), str(tmp_path / "back")], capture_output=True, text=True)
    assert refused.returncode != 0 and "nothing is overwritten" in refused.stderr
    subprocess.run(TOOL + ["--unpack", *map(str, packed), "--into", str(tmp_path / "here")], check=True)
    for name in ("a_seed0", "a_seed1", "a_seed2"):
        original = load_checkpoint(root / "runs" / name / "last.pt")
        last = load_checkpoint(tmp_path / "here" / name / "last.pt")
        for k, w in original["model"].items(): assert torch.equal(last["model"][k], w), k  # weights as they were
        moments = [v for s in last["optimizer"]["state"].values() for k, v in s.items() if k != "step"]
        assert moments and all(v.dtype == torch.bfloat16 for v in moments)
        # best.pt (its weights are last.pt's after one epoch) travelled without them and is whole again
        best, best_back = (load_checkpoint(d / name / "best.pt") for d in (root / "runs", tmp_path / "here"))
        assert best.keys() == best_back.keys() and best["epoch"] == best_back["epoch"]
        for k, w in best["model"].items(): assert torch.equal(best_back["model"][k], w), k
    history = fit(tiny(), data, data, TrainConfig.from_preset(get_preset("ci"), epochs=2, progress=False),
                  tmp_path / "here" / "a_seed0")
    assert [h["epoch"] for h in history] == [1, 2]  # resumed after the packed epoch
    again = subprocess.run(TOOL + ["--unpack", str(packed[0]), "--into", str(tmp_path / "here")], capture_output=True,
                           text=True)
    assert again.returncode != 0 and "already holds" in again.stderr  # never overwritten


def test_volumes_are_capped(trained, tmp_path):
    root, _ = trained
    sys.path.insert(0, str(ROOT / "tools"))
    from pack_runs import packed_run
    run_mib = sum(len(data) for _, data in packed_run(root / "runs" / "a_seed0")) / 2**20
    cap = str(1.5 * run_mib)  # one run per volume
    subprocess.run(TOOL + [str(root / "runs"), str(tmp_path / "v"), "--max-mib", cap], check=True)
    volumes = sorted(tmp_path.glob("v_*.tar"))
    assert len(volumes) == 3 and all(v.stat().st_size <= float(cap) * 2**20 for v in volumes)
    # more volumes than allowed: the runs come back without last.pt, evaluable but not resumable
    out = subprocess.run(TOOL + [str(root / "runs"), str(tmp_path / "w"), "--max-mib", cap, "--max-volumes", "1"],
                         capture_output=True, text=True, check=True)
    assert "leaving their last.pt out" in out.stderr
    subprocess.run(TOOL + ["--unpack", *map(str, sorted(tmp_path.glob("w_*.tar"))), "--into", str(tmp_path / "w_here")],
                   check=True)
    assert sorted(p.name for p in (tmp_path / "w_here" / "a_seed1").iterdir()) == ["best.pt", "history.json"]
    too_small = subprocess.run(TOOL + [str(root / "runs"), str(tmp_path / "x"), "--max-mib", str(run_mib / 10)],
                               capture_output=True, text=True)
    assert too_small.returncode != 0 and "more than a volume" in too_small.stderr and "nothing written" in too_small.stderr
    assert not list(tmp_path.glob("x_*"))


def test_rounded_weights_as_the_last_resort(trained, tmp_path):
    root, _ = trained
    sys.path.insert(0, str(ROOT / "tools"))
    from pack_runs import packed_run
    no_last_mib = sum(len(data) for _, data in packed_run(root / "runs" / "a_seed0", with_last=False)) / 2**20
    cap = str(1.5 * no_last_mib)  # one run per volume without last.pt; two with best.pt's weights in bf16
    out = subprocess.run(TOOL + [str(root / "runs"), str(tmp_path / "r"), "--max-mib", cap, "--max-volumes", "2"],
                         capture_output=True, text=True, check=True)
    assert "rounding best.pt's weights to bf16" in out.stderr and len(list(tmp_path.glob("r_*.tar"))) == 2
    subprocess.run(TOOL + ["--unpack", *map(str, sorted(tmp_path.glob("r_*.tar"))), "--into", str(tmp_path / "here")],
                   check=True)
    best, back = (load_checkpoint(d / "a_seed2" / "best.pt") for d in (root / "runs", tmp_path / "here"))
    assert back["weights_rounded_to_bf16"]
    for k, w in best["model"].items():
        assert back["model"][k].dtype == w.dtype and torch.equal(back["model"][k], w.to(torch.bfloat16).to(w.dtype)), k
