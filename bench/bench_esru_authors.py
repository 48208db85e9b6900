"""eSRU with `loop="authors"` against the recorded runs of the eSRU authors' code: seconds and AUROC side by side.

usage: .venv/bin/python bench/bench_esru_authors.py [--threads 1]
Prints one `name: value` line per figure, for Netsim sim3 subjects 0-4 and the four Lorenz-96 series (F = 40, T = 250)
of tests/test_esru_authors.py, with the settings of their runs. Their seconds were recorded on another machine (their
code is not part of this project), so the speed-up is only indicative; ours is this process's CPU time.
"""
import argparse
import json
import time
from pathlib import Path

import numpy as np

RUNS = Path(__file__).resolve().parents[1] / "tests" / "data" / "esru_authors_runs.json"


def compare(label, runs, xs, edges, est):
    from acd_nb.metrics import edge_auroc
    theirs = [edge_auroc(np.array(r["Gest"]).T[None], e[None]) for r, e in zip(runs, edges)]
    start = time.process_time()
    ours = [edge_auroc(est.fit_score(x)[None], e[None]) for x, e in zip(xs, edges)]
    seconds = (time.process_time() - start) / len(xs)
    their_seconds = np.mean([r["seconds"] for r in runs if r["seconds"]])
    print(f"{label}_series: {len(xs)}")
    print(f"{label}_auroc_ours: {np.mean(ours):.3f}")
    print(f"{label}_auroc_theirs: {np.mean(theirs):.3f}")
    print(f"{label}_cpu_sec_per_series_ours: {seconds:.2f}")
    print(f"{label}_sec_per_series_theirs: {their_seconds:.1f}")
    print(f"{label}_speedup: {their_seconds / seconds:.1f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args()
    import torch
    from acd_nb.baselines import ESRU
    from acd_nb.core import processor_name
    from acd_nb.data import load_netsim
    from acd_nb.sims import SimConfig, simulate
    torch.set_num_threads(args.threads)
    print(f"cpu: {processor_name()}\nthreads: {args.threads}")
    runs = json.loads(RUNS.read_text())["runs"]
    def recorded(setting): return sorted((r for r in runs if r["setting"] == setting), key=lambda r: r["series"])
    netsim = recorded("netsim")
    data = load_netsim(subjects=[r["series"] for r in netsim])
    compare("netsim", netsim, data["x"], data["edges"],
            ESRU(loop="authors", window=4, feedback_layers=1, lambdas=(0.1,), l1=0.1, out_group=1.0, lr=0.005, n_iter=500))
    lorenz = recorded("lorenz96_F40_T250")[:4]   # their fifth run diverged
    data = simulate(SimConfig(system="lorenz96", n_nodes=10, n_steps=250, forcing=40.0), 4, seed=1290)
    compare("lorenz96_F40_T250", lorenz, data["x"], data["edges"],
            ESRU(loop="authors", feedback_layers=1, window=124, lr=0.01, n_iter=500, l1=0.043088, out_group=0.928,
                 lambdas=(0.075,)))


if __name__ == "__main__":
    main()
