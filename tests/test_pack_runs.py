"""tools/pack_runs.py: a run packed on a GPU machine (optimiser moments in bf16) unpacks here and resumes."""
import subprocess
import sys

import torch

from conftest import ROOT
from acd_nb.core import get_preset, seed_everything
from acd_nb.model import ACD, ACDConfig
from acd_nb.train import TrainConfig, fit, load_checkpoint


def tiny():
    seed_everything(0)
    return ACD.from_config(ACDConfig(n_features=4, n_steps=12, hidden=8))


def test_packed_runs_unpack_and_resume(tmp_path):
    x = torch.randn(64, 3, 12, 4)
    edges = torch.randint(0, 2, (64, 3, 3)).float() * (1 - torch.eye(3))
    data = (x, edges)
    cfg = TrainConfig.from_preset(get_preset("ci"), epochs=1, progress=False)
    fit(tiny(), data, data, cfg, tmp_path / "runs" / "a_seed0")
    tool = [sys.executable, str(ROOT / "tools" / "pack_runs.py")]
    subprocess.run(tool + [str(tmp_path / "runs"), str(tmp_path / "back")], check=True)
    packed = tmp_path / "back_a_seed0.tar"
    subprocess.run(tool + ["--unpack", str(packed), "--into", str(tmp_path / "here")], check=True)
    last = load_checkpoint(tmp_path / "here" / "a_seed0" / "last.pt")
    original = load_checkpoint(tmp_path / "runs" / "a_seed0" / "last.pt")
    for k, w in original["model"].items(): assert torch.equal(last["model"][k], w), k  # weights as they were
    moments = [v for s in last["optimizer"]["state"].values() for k, v in s.items() if k != "step"]
    assert moments and all(v.dtype == torch.bfloat16 for v in moments)
    history = fit(tiny(), data, data, TrainConfig.from_preset(get_preset("ci"), epochs=2, progress=False),
                  tmp_path / "here" / "a_seed0")
    assert [h["epoch"] for h in history] == [1, 2]  # resumed after the packed epoch
    again = subprocess.run(tool + ["--unpack", str(packed), "--into", str(tmp_path / "here")], capture_output=True,
                           text=True)
    assert again.returncode != 0 and "already holds ['a_seed0']" in again.stderr  # never overwritten
