"""Validation AUROC against wall-clock training minutes for one or more `acd train` runs.

usage: .venv/bin/python bench/auroc_curve.py RUN_DIR [RUN_DIR ...] [--out curve.png]
Prints one `name: value` line per run and epoch (`<run>_epoch<k>: <minutes> <auroc>`, thinned to at most
12 lines per run) and saves the figure.
"""
import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="run folders holding history.json")
    ap.add_argument("--out", default="_reports/auroc_vs_minutes.png")
    args = ap.parse_args()
    fig, ax = plt.subplots(figsize=(6, 4))
    for run in map(Path, args.runs):
        history = json.loads((run / "history.json").read_text())
        minutes = [h["minutes"] for h in history]
        auroc = [h["valid_auroc"] for h in history]
        ax.plot(minutes, auroc, marker=".", label=run.name)
        step = max(1, len(history) // 12)
        for h in history[::step] + ([history[-1]] if (len(history) - 1) % step else []):
            print(f"{run.name}_epoch{h['epoch']}: {h['minutes']:.1f} min {h['valid_auroc']:.3f}")
    ax.set_xlabel("training minutes (wall clock)")
    ax.set_ylabel("validation AUROC (Enc)")
    ax.grid(alpha=0.3)
    ax.legend()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"figure: {args.out}")


if __name__ == "__main__":
    main()
