"""Training and inference speed at the paper's settings: hidden 256, batch 128, k=10, N=5, T=49.

Run inside the project environment: `.venv/bin/python bench/bench_train.py [--threads 2] [--n 2560]`.
Prints one `name: value` line per figure. Training is timed through `acd_nb.train.fit` itself (the
second and third of three epochs, so start-up costs and `torch.compile`'s compilation are excluded) on random data
of the right shape: speed does not depend on the values. The first lines name the processor and whether it computes
bf16 natively (`acd_nb.core.native_bf16`); a `bf16` line on a processor without it computes in float32, and says so.
For comparison, the authors' implementation on a 2-core machine like this one trained at about 113-134 samples/s
(springs, MLP encoder) and 58 samples/s (Kuramoto, CNN encoder), and its TTA cost about 0.65 s per step per 128-sample
batch.
"""
import argparse
import time

import torch

from acd_nb.core import compute_dtype, precision_info
from acd_nb.infer import tta
from acd_nb.model import ACD, ACDConfig
from acd_nb.train import TrainConfig, fit


def train_samples_per_s(cfg: ACDConfig, n: int, compile: bool) -> float:
    "Mean samples/s of epochs 2 and 3 (epoch 1 absorbs start-up and compilation)."
    model = ACD.from_config(cfg)
    x, edges = torch.randn(n, 5, 49, cfg.n_features), torch.zeros(n, 5, 5)
    history = fit(model, (x, edges), cfg=TrainConfig(epochs=3, batch_size=128, progress=False, compile=compile))
    return 2 * n / (60 * (history[2]["minutes"] - history[0]["minutes"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    ap.add_argument("--n", type=int, default=2560, help="training samples per timed epoch")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"threads: {args.threads}")
    for key, value in precision_info().items(): print(f"{key}: {value}")
    # first the settings the `cpu` preset uses (bf16 autocast; the CNN encoder compiled), then the others
    for encoder, name, default_compile in (("mlp", "springs_mlp", False), ("cnn", "kuramoto_cnn", True)):
        variants = ((f"train_{name}", "bf16", default_compile),
                    (f"train_{name}_{'eager' if default_compile else 'compiled'}", "bf16", not default_compile),
                    (f"train_{name}_fp32_eager", "fp32", False))
        for label, dtype, compile in variants:
            cfg = ACDConfig(n_features=4, n_steps=49, encoder=encoder, decoder="mlp", hidden=256, dtype=dtype)
            print(f"{label}_samples_per_s: {train_samples_per_s(cfg, args.n, compile):.0f}  (computes {compute_dtype(dtype)})",
                  flush=True)

    model = ACD.from_config(ACDConfig(n_features=4, n_steps=49, hidden=256, dtype="bf16")).eval()
    x = torch.randn(512, 5, 49, 4)
    with torch.no_grad():
        model.encode(x[:128])
        start = time.perf_counter()
        model.encode(x)
    print(f"precision of the lines below: {model.compute_dtype()}")
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
