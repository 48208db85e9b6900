"""Simulation throughput at paper settings (N=5): samples per second for springs and Kuramoto.

usage: .venv/bin/python bench/bench_sims.py [--n 10000] [--threads 1]
Run inside the project environment (`make bench`). Prints one `name: value` line per figure.
For context: the authors' per-sample generators, measured on a 2-core machine like this one, need about
0.18 s of CPU per springs sample and 0.09 s per Kuramoto sample (T=49), i.e. about 5.6 and 11 samples/s.
"""
import argparse
import os
import time

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="samples per simulator and length")
    parser.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (the simulators are single-threaded numpy)")
    args = parser.parse_args()
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"): os.environ.setdefault(var, str(args.threads))
    from acd_nb.sims import SimConfig, simulate

    print(f"n_samples: {args.n}")
    for system in ("springs", "kuramoto"):
        for steps in (49, 99):
            cfg = SimConfig(system=system, n_steps=steps)
            start = time.perf_counter()
            out = simulate(cfg, args.n, seed=0)
            seconds = time.perf_counter() - start
            suffix = "" if steps == 49 else f"_T{steps}"
            print(f"{system}{suffix}_samples_per_s: {args.n / seconds:.0f}")
            print(f"{system}{suffix}_seconds: {seconds:.2f}")
            assert out["x"].shape == (args.n, 5, steps, 4)

if __name__ == "__main__":
    main()
