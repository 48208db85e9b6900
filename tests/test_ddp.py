"""Scale-out: `acd train` under `torchrun` with two CPU processes (DistributedDataParallel over gloo)."""
import json
import os
import subprocess
import sys

import torch

from acd_nb.model import ACD
from acd_nb.train import evaluate_loss, load_checkpoint
from acd_nb.data import load_dataset
from conftest import BIN


def test_torchrun_two_processes(tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [str(BIN / "torchrun"), "--standalone", "--nproc_per_node=2", "--no-python", str(BIN / "acd"), "train",
           "--sim", "springs", "--preset", "ci", "--epochs", "4", "--hidden", "16", "--out", str(out)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    history = json.loads((out / "history.json").read_text())
    assert len(history) == 4
    assert history[-1]["train_loss"] < history[0]["train_loss"], history
    assert "valid_auroc" in history[-1]  # rank 0 validated

    ckpt = load_checkpoint(out / "best.pt")
    last = load_checkpoint(out / "last.pt")
    assert last["epoch"] == 4 and last["step_in_epoch"] == 0
    model = ACD.from_config(ckpt["config"])
    model.load_state_dict(ckpt["model"])  # plain keys: DDP's `module.` prefix never reaches the file
    run = json.loads((out / "run.json").read_text())
    valid = load_dataset(run["data_path"]).valid
    res = evaluate_loss(model, torch.as_tensor(valid["x"]), torch.as_tensor(valid["edges"]))
    # the validation loss samples hard edges with Gumbel noise, so it matches rank 0's figure only roughly
    assert abs(res["loss"] - ckpt["valid"]["loss"]) < 0.25 * ckpt["valid"]["loss"]
    assert abs(res["auroc"] - ckpt["valid"]["auroc"]) < 1e-6  # edge scores are deterministic
