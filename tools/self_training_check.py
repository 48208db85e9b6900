"""Adaptation by self-training (`acd_nb.train.adapt_by_self_training`), measured: AUROC before and after, and seconds.

1. NetSim sim3 (BOLD, 15 regions, 200 steps; in no mixture): the model adapted to the 50 subjects (no labels) and
   each subject read on its own, before and after (as `exp_general` (e) adapts and scores).
2. Systems left out: each leave-one-out model of `--loo` (trained on the mixture without system S) adapted to a
   collection of `--recordings` fresh recordings of S (10 series, `--steps` steps) and scored on 10 others.

    OMP_NUM_THREADS=1 python tools/self_training_check.py --model training/general_lag1 --loo training/general_lag1/loo
"""
import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from acd_nb.data import load_netsim
from acd_nb.infer import infer
from acd_nb.metrics import edge_auroc
from acd_nb.pretrained import load_model, prepare_series
from acd_nb.sims import simulate_recordings
from acd_nb.train import adapt_by_self_training


def auroc(loaded, x, edges) -> float:
    "Mean per-recording Enc AUROC of raw series `x (B, N, T, D)`, read as `acd infer` reads them"
    scaled, _ = prepare_series(loaded, x)
    return float(np.nanmean(edge_auroc(infer(loaded.model, scaled, "enc", progress=False).numpy(), edges, per_sample=True)))


def fresh(system: str, b: int, steps: int, seed: int):
    "`b` recordings of `system` (10 series, its observed features) and their graphs"
    recordings = simulate_recordings(system, 10, steps, b, seed)  # as exp_general draws its test recordings
    return recordings["x"], recordings["edges"]


def adapted(init, recordings, train: dict, folder: Path):
    "The model adapted by self-training to `recordings` `(B, N, T, D)`, and the seconds it took"
    tic = time.perf_counter()
    adapt_by_self_training(recordings, folder, init=init, train={"progress": False, **train})
    return load_model(folder), time.perf_counter() - tic


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="general", help="the model adapted on NetSim (shipped name or folder)")
    p.add_argument("--loo", help="folder of leave-one-out models, one per system (skipped without)")
    p.add_argument("--systems", help="comma-separated left-out systems (default: every folder of --loo)")
    p.add_argument("--recordings", type=int, default=200)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--epochs", type=int, help="self-training epochs (default: SELF_TRAINING's)")
    p.add_argument("--lr", type=float, help="self-training learning rate (default: SELF_TRAINING's)")
    args = p.parse_args()
    torch.set_num_threads(1)
    train = {k: v for k, v in dict(epochs=args.epochs, lr=args.lr).items() if v is not None}
    with tempfile.TemporaryDirectory() as tmp:
        model = load_model(args.model)
        net = load_netsim(subjects=range(50))
        tuned, seconds = adapted(model.info["path"], net["x"], train, Path(tmp) / "netsim")
        print(f"NetSim sim3, 50 subjects: zero-shot {auroc(model, net['x'], net['edges']):.3f} -> self-trained "
              f"{auroc(tuned, net['x'], net['edges']):.3f} ({seconds:.0f} s)", flush=True)
        if not args.loo: return
        systems = args.systems.split(",") if args.systems else sorted(d.name for d in Path(args.loo).iterdir()
                                                                       if (d / "run.json").exists())
        for k, system in enumerate(systems):
            left_out = load_model(Path(args.loo) / system)
            x_test, e_test = fresh(system, 10, args.steps, 50_001 + k)
            collection, _ = fresh(system, args.recordings, args.steps, 60_001 + k)
            tuned, seconds = adapted(left_out.info["path"], collection, train, Path(tmp) / system)
            print(f"{system:16s} left out: zero-shot {auroc(left_out, x_test, e_test):.3f} -> self-trained on "
                  f"{args.recordings} recordings {auroc(tuned, x_test, e_test):.3f} ({seconds:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
