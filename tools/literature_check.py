"""The shipped `general` model on generators from the Granger-causality literature, measured against linear Granger.

    OMP_NUM_THREADS=1 python tools/literature_check.py [--recordings 20] [--steps 100,250,500,1000] [--only NAME]
        [--model general|RUN_FOLDER]

The generators are written here from their papers' descriptions, not taken from their code, so they are near the
benchmarks people run, not copies of them; none is one of the mixture's families, so every reading is zero-shot:

- `lorenz96`: Lorenz-96 on a ring (x_j driven by x_{j-2}, x_{j-1}, x_{j+1}), forcing 10 and 40, sampled every 0.05
  time units (10 RK4 steps each), observation noise 0.1 (as Tank et al. 2021, Neural Granger Causality, use it).
- `var3`: the VAR(3) of Tank et al.: each series caused by itself and a fifth of the others, at lags 1 to 3 with
  one coefficient, shrunk by 0.95 until stable; innovations 0.1.
- `multi_lv`: multi-species Lotka-Volterra (Marcinkevičs and Vogt 2021, GVAR): p prey and p predators in blocks of
  two, each predator eating the prey of its block; growth 1.2, predation 0.2, death 1.1, conversion 0.05, crowding at
  200; RK4 steps of 0.01 with noise 0.1 each, every tenth step kept; populations clipped at 0.
- `pcmci`: the structural processes of Runge et al. 2019 (PCMCI): autodependence 0.3-0.9, N cross links at a lag
  of 1 to `max lag`, coefficients ±0.1-0.5, each link linear or (1 + 5x e^{-x²/20}) x, Gaussian or Weibull noise.

Each recording is read as `acd infer --pretrained general` reads it (`prepare_series`, Enc; longer than the encoder's
window: in windows); the score is the mean over recordings of each one's AUROC, self-loops left out. A row's
recordings are drawn from `--seed`, its generator, N and T alone: the same whichever rows are run.
"""
import argparse
import time
import zlib
from pathlib import Path

import numpy as np
import torch

from acd_nb.baselines import get_baseline
from acd_nb.infer import infer
from acd_nb.metrics import edge_auroc
from acd_nb.pretrained import load_model, prepare_series, standardise_samples
from acd_nb.sims import _kicked_rk4


def lorenz96(rng, b: int, n: int, t: int, forcing: float, every: float = 0.05, noise: float = 0.1,
             burn_in: int = 1000):
    "`(b, n, t)` Lorenz-96 ring recordings and their `(b, n, n)` graph (`[k, i, j] = 1`: i causes j)"
    def rate(x): return (np.roll(x, -1, 1) - np.roll(x, 2, 1)) * np.roll(x, 1, 1) - x + forcing
    x0 = forcing + rng.normal(0, 0.01, (b, n))
    states = _kicked_rk4(rate, lambda x, _: x, x0, np.zeros((b, burn_in + t)), every, 10, burn_in, t)  # no process noise
    causes = np.zeros((n, n), np.int8)
    effects = np.arange(n)
    causes[(effects[:, None] + [-2, -1, 1]) % n, effects[:, None]] = 1                  # x_{j-2}, x_{j-1}, x_{j+1}
    return states + noise * rng.standard_normal(states.shape), np.broadcast_to(causes, (b, n, n)).copy()


def var3(rng, b: int, n: int, t: int, lags: int = 3, share: float = 0.2, noise: float = 0.1, burn_in: int = 100):
    "`(b, n, t)` VAR(3) recordings (every edge at every lag, one coefficient) and their graphs"
    k = max(1, int(share * n) - 1)                                   # causes besides itself
    order = rng.random((b, n, n)) + 2 * np.eye(n)                    # [b, effect, cause]: itself never drawn
    causes = (np.argsort(np.argsort(order, -1), -1) < k).astype(np.int8)  # the k smallest draws: never the diagonal
    coef = np.broadcast_to((causes + np.eye(n, dtype=np.int8))[:, None], (b, lags, n, n)).astype(float)
    companion = np.zeros((b, n * lags, n * lags))
    companion[:, n:, :-n] = np.eye(n * (lags - 1))
    while True:
        companion[:, :n] = np.concatenate(list(coef.transpose(1, 0, 2, 3)), -1)
        unstable = np.abs(np.linalg.eigvals(companion)).max(-1) >= 1
        if not unstable.any(): break
        coef = np.where(unstable[:, None, None, None], 0.95 * coef, coef)
    xs = [np.zeros((b, n))] * lags
    for _ in range(burn_in + t):
        drive = sum(np.einsum("bji,bi->bj", coef[:, l], xs[-1 - l]) for l in range(lags))
        xs.append(drive + noise * rng.standard_normal((b, n)))
    return np.stack(xs[-t:], -1), causes.transpose(0, 2, 1).copy()


def multi_lv(rng, b: int, p: int, t: int, block: int = 2, growth: float = 1.2, predation: float = 0.2,
             death: float = 1.1, conversion: float = 0.05, noise: float = 0.1, h: float = 0.01, keep_every: int = 10,
             burn_in: int = 100):
    "`(b, 2p, t)` prey then predator populations and their graphs"
    eats = (np.arange(p)[:, None] // block == np.arange(p)[None] // block).astype(float)  # [predator, prey]
    def rate(s):  # s (b, 2, p): prey, predators
        prey, pred = s[:, 0], s[:, 1]
        return np.stack([growth * prey - predation * prey * (pred @ eats) - growth * (prey / 200) ** 2,
                         conversion * pred * (prey @ eats.T) - death * pred], 1)
    s0, steps = rng.uniform(10, 100, (b, 2, p)), (burn_in + t) * keep_every
    # noise after every RK4 step, populations clipped at 0; every keep_every-th state kept
    states = _kicked_rk4(rate, lambda s, k: np.maximum(s + noise * k, 0), s0, rng.standard_normal((b, steps, 2, p)), h, 1,
                         burn_in * keep_every, t * keep_every)[..., ::keep_every]
    causes = np.zeros((2 * p, 2 * p), np.int8)
    causes[p:, :p], causes[:p, p:] = eats, eats.T                                            # predator -> prey and back
    return states.reshape(b, 2 * p, t), np.broadcast_to(causes, (b, 2 * p, 2 * p)).copy()


def pcmci_process(rng, b: int, n: int, t: int, max_lag: int, nonlinear: bool, weibull: bool, burn_in: int = 200):
    "`(b, n, t)` autodependent processes with N cross links and their graphs; draws that diverge are drawn again"
    def draw(b):
        links = np.argsort(rng.random((b, n * n)) + 2 * np.eye(n).ravel(), -1)[:, :n]     # N cross links, no self-loops
        causes = np.zeros((b, n * n), np.int8); np.put_along_axis(causes, links, 1, -1)
        causes = causes.reshape(b, n, n)                                                   # [b, cause, effect]
        lag = rng.integers(1, max_lag + 1, (b, n, n))
        coef = causes * rng.choice([-1, 1], (b, n, n)) * rng.uniform(0.1, 0.5, (b, n, n))
        bent = causes * (rng.random((b, n, n)) < 0.5) if nonlinear else np.zeros((b, n, n))
        per_lag = (np.arange(1, max_lag + 1)[None, :, None, None] == lag[:, None]) * coef[:, None]  # (b, lag, i, j)
        auto = rng.uniform(0.3, 0.9, (b, n))
        xs = [np.zeros((b, n))] * max_lag
        for _ in range(burn_in + t):
            drive = 0
            for l in range(max_lag):
                u = xs[-1 - l]
                curved = (1 + 5 * u * np.exp(-u * u / 20)) * u
                drive = drive + np.einsum("bi,bij->bj", u, per_lag[:, l] * (1 - bent)) \
                    + np.einsum("bi,bij->bj", curved, per_lag[:, l] * bent)
            shock = rng.weibull(2, (b, n)) - 0.886 if weibull else rng.standard_normal((b, n))  # Weibull(2): mean 0.886
            xs.append(auto * xs[-1] + drive + shock)
        return np.stack(xs[-t:], -1), causes
    x, causes = draw(b)
    while (bad := ~(np.isfinite(x).all((1, 2)) & (np.abs(np.nan_to_num(x, nan=np.inf)) < 1e3).all((1, 2)))).any():
        x[bad], causes[bad] = draw(int(bad.sum()))
    return x, causes


def cases(steps: list[int]):
    "(name, N, T, generate(rng, b)) of every row"
    for t in steps:
        for n in (10, 20):
            for forcing in (10.0, 40.0):
                yield f"lorenz96 F={forcing:g}", n, t, lambda rng, b, n=n, t=t, f=forcing: lorenz96(rng, b, n, t, f)
            yield "var3", n, t, lambda rng, b, n=n, t=t: var3(rng, b, n, t)
            yield "multi_lv", n, t, lambda rng, b, n=n, t=t: multi_lv(rng, b, n // 2, t)
        for max_lag, nonlinear, weibull in ((1, False, False), (3, False, False), (3, True, False), (3, True, True)):
            name = f"pcmci lag<={max_lag} {'nonlinear' if nonlinear else 'linear'} {'weibull' if weibull else 'gauss'}"
            yield name, 10, t, lambda rng, b, t=t, a=(max_lag, nonlinear, weibull): pcmci_process(rng, b, 10, t, *a)


def mean_auroc(scores, edges) -> float:
    "Mean over recordings of each one's AUROC"
    return float(np.nanmean(edge_auroc(scores, edges, per_sample=True)))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--recordings", type=int, default=20, help="recordings per row")
    p.add_argument("--model", default="general", help="a shipped model's name or a run folder (a candidate)")
    p.add_argument("--steps", default="100,250,500,1000", help="recording lengths, comma-separated")
    p.add_argument("--only", help="rows whose generator name starts with this")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.set_num_threads(1)
    loaded = load_model(Path(args.model) if Path(args.model).is_dir() else args.model)
    granger = get_baseline("linear_granger")
    print(f"model {loaded.name!r}: {loaded.info['path']}")
    print(f"{'generator':34s} {'N':>3s} {'T':>5s}  model    linear Granger  seconds")
    for name, n, t, generate in cases([int(s) for s in args.steps.split(",")]):
        if args.only and not name.startswith(args.only): continue
        tic = time.perf_counter()
        x, edges = generate(np.random.default_rng([args.seed, zlib.crc32(name.encode()), n, t]), args.recordings)
        x = x[..., None].astype(np.float32)                                          # one feature per series
        scaled, _ = prepare_series(loaded, x)
        ours = mean_auroc(infer(loaded.model, scaled, "enc", progress=False).numpy(), edges)
        theirs = mean_auroc(granger.score_batch(standardise_samples(x), progress=False), edges)
        print(f"{name:34s} {n:3d} {t:5d}  {ours:7.3f}  {theirs:13.3f}  {time.perf_counter() - tic:7.1f}", flush=True)
