"""How the shipped `general` model reads long recordings, many series and two series, measured (Enc AUROC, seconds).

    OMP_NUM_THREADS=1 python tools/general_reading_check.py [--only windows|subsets|two]

Every recording is prepared as `acd infer --pretrained general` prepares it (`prepare_series`: each recording
standardised on its own, the features it lacks read as unobserved) and read with `acd_nb.infer.infer(..., "enc")`.

1. windows: a recording longer than the encoder's `max_window` (100) read in windows of 100 steps alone (each window
   read by `infer`, their edge probabilities averaged) against the library's default (windows of 100 and of 200, the two
   sizes averaged, `encode_windows`); mean per-recording AUROC, N = 10, `exp_general` (d)'s samplers and sample seeds
   (seeds 0-2, 10 recordings each; seed 0 is the report's), and NetSim sim3 (each of the 50 subjects on its own).
2. subsets: N = 100 and 150 (2 recordings of 300 steps per system, 2.5 causes per series) read whole
   (`max_series=None`) against in overlapping subsets of 50 series (`LoadedModel.max_series`, the default), pooled
   AUROC; then 200 independent AR(1) series, one driving another: edges above p = 0.5 either way.
3. two: 60 recordings of 100 steps per system, each edge present with probability 0.5, pooled AUROC at N = 2 and 3
   (the VAR simulator gives every series a cause: at N = 2 every edge is present, so VAR at N = 3 only).
"""
import argparse
import time

import numpy as np
import torch

from acd_nb.data import load_netsim
from acd_nb.infer import _windows_probs, encoder_window, infer, split_observed
from acd_nb.metrics import edge_auroc, posterior_to_scores
from acd_nb.pretrained import load_model, prepare_series
from acd_nb.sims import MIXTURE_SYSTEMS, MixtureConfig, simulate_recordings


def fresh(system: str, n: int, t: int, b: int, seed: int, mixture: MixtureConfig | None = None):
    "`b` raw recordings `(b, n, t, observed features)` of `system` drawn as `exp_general` draws them, and their graphs"
    recordings = simulate_recordings(system, n, t, b, seed, mixture)
    return recordings["x"], recordings["edges"]


def read(loaded, x, single_window: bool = False, **kwargs) -> np.ndarray:
    """Enc edge probabilities `(B, N, N)` of raw `x` prepared as `acd infer` prepares it; `single_window`: in windows of
    the encoder's `max_window` alone (`encode_windows`' first size, without its second)"""
    scaled, _ = prepare_series(loaded, x)
    window = encoder_window(loaded.model)
    if not single_window or scaled.shape[2] <= window:
        return infer(loaded.model, scaled, "enc", progress=False, **kwargs).numpy()
    series, observed = split_observed(scaled)
    probs = _windows_probs(loaded.model, series, observed, window, None)
    return posterior_to_scores(probs).numpy()


def mean_auroc(probs, edges) -> float:
    "Mean over recordings of each one's AUROC, as `exp_general` scores"
    return float(np.nanmean(edge_auroc(probs, edges, per_sample=True)))


def timed(f, *args, **kwargs):
    tic = time.perf_counter()
    return f(*args, **kwargs), time.perf_counter() - tic


def windows(loaded):
    print("windows: mean per-recording Enc AUROC, windows of 100 alone -> both sizes (default), seconds of the "
          "two; N = 10, seeds 0-2")
    net = load_netsim()
    rows = {"NetSim sim3 (50 subjects)": [(net["x"], net["edges"])]}
    for system in ("var_lagged", "springs"):
        for t in (200, 500, 1000):  # exp_general's sample_seed(seed, system, 10, t), seeds 0-2
            base = 10_000 + 100 * MIXTURE_SYSTEMS.index(system) + 10 + 7 * (t // 50)
            seeds = [base + 1_000 * seed for seed in range(3)]
            rows[f"{system} T={t}"] = [fresh(system, 10, t, 10, seed) for seed in seeds]
    for name, draws in rows.items():
        (alone, both), seconds = timed(lambda: [np.mean([mean_auroc(read(loaded, x, single), e) for x, e in draws])
                                                for single in (True, False)])
        print(f"  {name:26s} {alone:.3f} -> {both:.3f}   ({seconds:.1f} s)", flush=True)


def subsets(loaded):
    print(f"subsets: pooled Enc AUROC [share of edges above 0.5], read whole -> in subsets of {loaded.max_series}; "
          "2 recordings of 300 steps")
    for k, system in enumerate(("var", "var_nonlinear", "springs", "kuramoto", "fmri")):
        for n in (100, 150):
            x, edges = fresh(system, n, 300, 2, 30_000 + 100 * k + n)
            cells = []
            for most in (None, loaded.max_series):
                probs, seconds = timed(read, loaded, x, max_series=most)
                cells.append(f"{edge_auroc(probs, edges):.3f} [{(probs[:, ~np.eye(n, dtype=bool)] > 0.5).mean():.2f}] "
                             f"({seconds:.0f} s)")
            print(f"  {system:14s} N={n:<4d} {' -> '.join(cells)}", flush=True)
    rng, n, t = np.random.default_rng(40_000), 200, 300
    x = np.zeros((1, n, t, 1), np.float32)
    noise = rng.standard_normal((n, t))
    for s in range(1, t):  # x_i <- 0.5 x_i + noise; series 0 drives series 1 (0.8 x_0)
        x[0, :, s, 0] = 0.5 * x[0, :, s - 1, 0] + noise[:, s]
        x[0, 1, s, 0] += 0.8 * x[0, 0, s - 1, 0]
    print(f"  200 independent AR(1) series (0.5), series 0 driving series 1 (0.8), {t} steps: edges above 0.5 of "
          f"{n * (n - 1)}")
    for most in (None, loaded.max_series):
        probs, seconds = timed(read, loaded, x, max_series=most)
        above = np.argwhere((probs[0] > 0.5) & ~np.eye(n, dtype=bool))
        named = (", ".join(f"{i} -> {j} {probs[0, i, j]:.3f}" for i, j in above) if len(above) <= 5
                 else f"p(0 -> 1) {probs[0, 0, 1]:.3f}")
        print(f"    max_series={most}: {len(above)} above 0.5 ({named})  ({seconds:.1f} s)", flush=True)


def two(loaded):
    print("two series: pooled Enc AUROC at N = 2 (N = 3); 60 recordings of 100 steps, each edge with probability 0.5")
    systems = ("springs", "kuramoto", "fmri", "var_nonlinear", "maps", "var_lagged", "additive", "var")
    for k, system in enumerate(systems):
        cells, seconds = [], 0.0
        for n in (2, 3):  # 0.5 (n - 1) causes per series: each edge present with probability 0.5
            x, edges = fresh(system, n, 100, 60, 50_000 + 10 * k + n, MixtureConfig(in_degree=(0.5 * (n - 1),) * 2,
                                                                                    step_scale=(1.0, 1.0)))
            if edges[:, ~np.eye(n, dtype=bool)].min() == 1: cells.append("  –  "); continue  # every edge present
            probs, s = timed(read, loaded, x)
            cells.append(f"{edge_auroc(probs, edges):.3f}"); seconds += s
        print(f"  {system:14s} {cells[0]} ({cells[1]})   ({seconds:.1f} s)", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", choices=("windows", "subsets", "two"))
    args = p.parse_args()
    torch.set_num_threads(1)
    loaded = load_model("general")
    for part in (windows, subsets, two):
        if args.only in (None, part.__name__):
            _, seconds = timed(part, loaded)
            print(f"{part.__name__}: {seconds:.0f} s\n", flush=True)


if __name__ == "__main__":
    main()
