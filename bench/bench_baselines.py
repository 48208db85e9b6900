"""Causal-discovery baselines (acd_nb.baselines): pooled edge AUROC and seconds per sample on Kuramoto and Netsim.

usage: .venv/bin/python bench/bench_baselines.py [--n-samples 20] [--features 1 0] [--methods ngc mi ...]
                                                 [--netsim-subjects 50] [--netsim-slow-subjects 50] [--score norm]
                                                 [--method-args JSON] [--netsim-joined] [--threads 2]
Run inside the project environment. Prints one `name: value` line per figure.
Kuramoto: clean default simulator (N=5, T=49 steps), test-style samples from seed 2024; the 1-D baselines see
one feature per oscillator: 1 = sin(phi) (default), 0 = dphi/dt, 2 = phase/pi. NGC and eSRU use the paper's Kuramoto
lambda grids and the library's group-norm score (`--score path`: the ACD paper's); `--method-args` sets any other
option of a method, or replaces those (e.g. eSRU as its authors fit Lorenz-96: `'{"esru": {"loop": "authors", ...}}'`);
`mi_lag0` is the contemporaneous (symmetric) MI. Netsim sim3 (N=15, T=200, one graph): all subjects for every method unless --netsim-slow-subjects
limits the neural methods (ngc, esru, mpir); NGC and eSRU use the paper's Netsim lambda grid. Skipped with a
message when the Netsim folder is missing. `--netsim-joined` also fits every method but MI and TE once on all subjects joined in
time (one graph underlies them; 49 of the 9,999 transitions cross from one subject to the next), as ACD itself
trains on all subjects, where the paper's baselines see one subject at a time. Paper (Tables 2/3), Kuramoto | Netsim AUROC: MPIR 0.502 | 0.484,
TE 0.560 | 0.543, NGC 0.574 | 0.624, eSRU 0.607 | 0.670, MI 0.616 | 0.728, linear Granger 0.647 | 0.503.
"""
import argparse
import json
import os
import time

SLOW = ("ngc", "esru", "mpir")
QUADRATIC = ("mi", "te")      # KSG estimators: all pairwise distances between time steps

def run(method, xs, edges, label: str):
    from acd_nb.metrics import edge_auroc
    start = time.perf_counter()
    scores = method.score_batch(xs, progress=False)
    seconds = (time.perf_counter() - start) / len(xs)
    print(f"{label}_auroc: {edge_auroc(scores, edges):.3f}", flush=True)
    print(f"{label}_sec_per_sample: {seconds:.3f}", flush=True)

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=20, help="Kuramoto samples (0: skip Kuramoto)")
    parser.add_argument("--features", type=int, nargs="+", default=[1], help="Kuramoto feature(s) fed to the baselines, one run each")
    parser.add_argument("--methods", nargs="+", default=None, help="subset of acd_nb.baselines.BASELINES (default: all)")
    parser.add_argument("--netsim-subjects", type=int, default=50, help="Netsim subjects for the fast methods (0: skip Netsim)")
    parser.add_argument("--netsim-slow-subjects", type=int, default=50, help="Netsim subjects for ngc, esru and mpir")
    parser.add_argument("--score", choices=("norm", "path"), default="norm",
                        help="edge score of ngc and esru: the library's group norms, or the ACD paper's path score")
    parser.add_argument("--method-args", type=json.loads, default={},
                        help='keyword arguments per method as JSON, e.g. \'{"ngc": {"hidden": 100}}\'; they replace '
                             "the λ grids and --score where they name the same option")
    parser.add_argument("--netsim-joined", action="store_true",
                        help="also fit each method once on all Netsim subjects joined in time")
    parser.add_argument("--threads", type=int, default=2, help="torch / BLAS threads")
    args = parser.parse_args()
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"): os.environ.setdefault(var, str(args.threads))
    import torch
    torch.set_num_threads(args.threads)
    from acd_nb.baselines import BASELINES, ESRU_LAMBDAS_KURAMOTO, NGC_LAMBDAS_KURAMOTO, NGC_LAMBDAS_NETSIM, get_baseline
    from acd_nb.data import load_netsim
    from acd_nb.sims import SimConfig, simulate

    methods = args.methods or list(BASELINES)
    if not isinstance(args.method_args, dict) or not all(isinstance(v, dict) for v in args.method_args.values()):
        parser.error(f"--method-args must be a JSON object of objects, got {args.method_args!r}")
    if unused := sorted(set(args.method_args) - set(methods)):
        parser.error(f"--method-args names {unused}, which are not among the methods run: {methods}")
    grids = {"kuramoto": {"ngc": NGC_LAMBDAS_KURAMOTO, "esru": ESRU_LAMBDAS_KURAMOTO},
             "netsim": {"ngc": NGC_LAMBDAS_NETSIM, "esru": NGC_LAMBDAS_NETSIM}}
    def build(name, dataset):
        defaults = dict(lambdas=grids[dataset][name], score=args.score) if name in grids[dataset] else {}
        try: return get_baseline(name, **{**defaults, **args.method_args.get(name, {})})
        except (TypeError, ValueError) as e: parser.error(f"--method-args for {name}: {e}")
    # every method built before any fit, so a bad option stops the run at once, not after minutes of other fits
    models = {dataset: {name: build(name, dataset) for name in methods} for dataset in grids}

    print(f"threads: {args.threads}")
    if args.n_samples > 0:
        data = simulate(SimConfig(system="kuramoto", n_steps=49), args.n_samples, seed=2024)
        print(f"kuramoto_samples: {args.n_samples}")
        for feature in args.features:
            for name in methods:
                run(models["kuramoto"][name], data["x"][..., [feature]], data["edges"], f"kuramoto_f{feature}_{name}")
            if "mi" in methods:
                run(get_baseline("mi", lag=0), data["x"][..., [feature]], data["edges"], f"kuramoto_f{feature}_mi_lag0")
    if args.netsim_subjects > 0 or args.netsim_joined:
        try: netsim = load_netsim()
        except FileNotFoundError as e:
            print(f"netsim: skipped ({e})")
            return
        for name in methods:
            limit = args.netsim_slow_subjects if name in SLOW else args.netsim_subjects
            n = min(limit, args.netsim_subjects, len(netsim["x"]))
            if n < 1: continue
            print(f"netsim_{name}_subjects: {n}")
            run(models["netsim"][name], netsim["x"][:n], netsim["edges"][:n], f"netsim_{name}")
            if name == "mi": run(get_baseline("mi", lag=0), netsim["x"][:n], netsim["edges"][:n], "netsim_mi_lag0")
        if args.netsim_joined:
            import numpy as np
            if (netsim["edges"] != netsim["edges"][:1]).any(): raise ValueError("Netsim subjects differ in their graph")
            joined = np.concatenate(list(netsim["x"]), axis=1)[None]          # (1, nodes, subjects * time, 1)
            print(f"netsim_joined_steps: {joined.shape[2]}")
            for name in methods:
                if name in QUADRATIC: print(f"netsim_joined_{name}: skipped (distances grow with the squared length)")
                else: run(models["netsim"][name], joined, netsim["edges"][:1], f"netsim_joined_{name}")

if __name__ == "__main__":
    main()
