"""Training and inference speed at the paper's settings: hidden 256, batch 128, k=10, N=5, T=49.

Run inside the project environment: `.venv/bin/python bench/bench_train.py [--threads 2] [--n 2560]`.
Prints one `name: value` line per figure. Training is timed through `acd_nb.train.fit` itself (the
second of two epochs, so start-up costs are excluded) on random data of the right shape: speed does
not depend on the values. For comparison, the authors' implementation on a 2-core machine like this
one trained at about 113-134 samples/s (springs, MLP encoder) and 58 samples/s (Kuramoto, CNN
encoder), and its TTA cost about 0.65 s per step per 128-sample batch.
"""
import argparse
import time

import torch

from acd_nb.infer import tta
from acd_nb.model import ACD, ACDConfig
from acd_nb.train import TrainConfig, fit


def train_samples_per_s(cfg: ACDConfig, n: int) -> float:
    model = ACD.from_config(cfg)
    x, edges = torch.randn(n, 5, 49, cfg.n_features), torch.zeros(n, 5, 5)
    history = fit(model, (x, edges), cfg=TrainConfig(epochs=2, batch_size=128, progress=False))
    return n / (60 * (history[1]["minutes"] - history[0]["minutes"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    ap.add_argument("--n", type=int, default=2560, help="training samples per timed epoch")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"threads: {args.threads}")
    for dtype in ("fp32", "bf16"):
        springs = ACDConfig(n_features=4, n_steps=49, encoder="mlp", decoder="mlp", hidden=256, dtype=dtype)
        kuramoto = ACDConfig(n_features=4, n_steps=49, encoder="cnn", decoder="mlp", hidden=256, dtype=dtype)
        suffix = "" if dtype == "bf16" else "_fp32"
        print(f"train_springs_mlp{suffix}_samples_per_s: {train_samples_per_s(springs, args.n):.0f}")
        print(f"train_kuramoto_cnn{suffix}_samples_per_s: {train_samples_per_s(kuramoto, args.n):.0f}")

    model = ACD.from_config(ACDConfig(n_features=4, n_steps=49, hidden=256, dtype="bf16")).eval()
    x = torch.randn(512, 5, 49, 4)
    with torch.no_grad():
        model.encode(x[:128])
        start = time.perf_counter()
        model.encode(x)
    print(f"encoder_ms_per_sample: {1000 * (time.perf_counter() - start) / len(x):.3f}")
    steps = 20
    tta(model, x[:128], steps=2, progress=False)
    start = time.perf_counter()
    tta(model, x[:128], steps=steps, progress=False)
    per_step = (time.perf_counter() - start) / steps
    print(f"tta_s_per_step_per_128_batch: {per_step:.4f}")
    print(f"tta_ms_per_sample: {1000 * per_step * 1000 / 128:.1f}  # 1000 steps, as in the paper")


if __name__ == "__main__":
    main()
