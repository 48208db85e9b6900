"""Graphs inferred per second from a folder of recordings, as a user runs `acd infer`, beside per-sample baselines.

usage: .venv/bin/python bench/bench_infer.py [--n 1000] [--threads 2] [--tta-steps 50] [--baseline-n 20]
                                             [--systems springs kuramoto] [--methods linear_granger ngc]
Run inside the project environment. Prints one `name: value` line per figure. For each shipped model, `--n` fresh
test recordings (the first 49 steps, the model's own features) are written as one `.npy` file each into a
temporary folder; `acd_nb.commands.infer_files` then reads the folder, infers every graph (the encoder over many
recordings at once, grouped by shape) and writes one CSV per recording, timed from the first file read to the last
CSV written. The pooled AUROC is read back from those CSVs. The baselines (`acd_nb.baselines`) fit each of the first
`--baseline-n` recordings on its own; their rate is graphs per second of that fit. This is the amortization the ACD
paper promises: one forward pass per graph instead of one model fitted per sample.
"""
import argparse
import os
import tempfile
import time
from pathlib import Path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="recordings per shipped model")
    parser.add_argument("--threads", type=int, default=2, help="torch / BLAS threads")
    parser.add_argument("--tta-steps", type=int, default=50, help="TTA steps of the Enc+TTA line (0: skip it)")
    parser.add_argument("--baseline-n", type=int, default=20, help="recordings each baseline fits (0: skip them)")
    parser.add_argument("--systems", nargs="+", default=["springs", "kuramoto"], help="shipped models to time")
    parser.add_argument("--methods", nargs="+", default=["linear_granger", "ngc"], help="per-sample baselines")
    args = parser.parse_args()
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"): os.environ.setdefault(var, str(args.threads))
    import numpy as np
    import pandas as pd
    import torch
    torch.set_num_threads(args.threads)
    from acd_nb.baselines import get_baseline
    from acd_nb.commands import infer_files
    from acd_nb.core import precision_info
    from acd_nb.metrics import edge_auroc
    from acd_nb.pretrained import load_model, simulate_test_set

    print(f"threads: {args.threads}")
    print(f"precision: {precision_info()}")
    for system in args.systems:
        loaded = load_model(system)
        test = simulate_test_set(loaded, args.n, seed=2024)
        raw, edges = test["raw_x"][:, :, :49], test["edges"]
        print(f"{system}_recordings: {args.n} of {raw.shape[1]} series x {raw.shape[2]} steps x {raw.shape[3]} "
              f"features ({loaded.model.compute_dtype()})", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "recordings"
            folder.mkdir()
            for k, x in enumerate(raw): np.save(folder / f"rec_{k:05d}.npy", x[None])
            methods = [("enc", None)] + ([("enc+tta", args.tta_steps)] if args.tta_steps > 0 else [])
            for method, steps in methods:
                out = Path(tmp) / method.replace("+", "_")
                start = time.perf_counter()
                summary = infer_files(loaded, [folder], out, method=method, tta_steps=steps, figures=False,
                                      verbose=False)
                seconds = time.perf_counter() - start
                probs = np.stack([pd.read_csv(s["edges_csv"], index_col=0).to_numpy() for s in summary["samples"]])
                label = f"{system}_{method.replace('+', '_')}" + (f"{steps}" if steps else "")
                print(f"{label}_infer_graphs_per_s: {args.n / seconds:.1f}  ({seconds:.1f} s)", flush=True)
                print(f"{label}_auroc: {edge_auroc(probs, edges):.3f}", flush=True)
        for name in args.methods if args.baseline_n > 0 else []:
            xs = raw[:args.baseline_n]
            start = time.perf_counter()
            scores = get_baseline(name).score_batch(xs, progress=False)
            seconds = time.perf_counter() - start
            print(f"{system}_{name}_graphs_per_s: {len(xs) / seconds:.2f}  ({seconds:.1f} s for {len(xs)})", flush=True)
            print(f"{system}_{name}_auroc: {edge_auroc(scores, edges[:args.baseline_n]):.3f}", flush=True)


if __name__ == "__main__":
    main()
