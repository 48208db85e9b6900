"""Ship the general model: `acd_nb/pretrained_models/general/` from a `tools/train_general.py` run, its card with the
Enc and Enc+TTA AUROC on the fresh springs test set `acd demo` draws (`simulate_test_set`, seed 1) and, given the
`exp_general` report's results.json, the zero-shot AUROC per system and N.

    OMP_NUM_THREADS=1 python tools/ship_general.py --run _reports/general/run --results reports/cpu/exp_general/results.json
"""
import argparse
import json
from pathlib import Path

import torch

from acd_nb.infer import evaluate
from acd_nb.pretrained import export_pretrained, load_model, simulate_test_set, summarise_evaluation

TTA = dict(steps=100, lr=0.1)


def baselines(row: dict) -> str:
    "The per-sample baselines' AUROC of a results.json row, as the card shows them"
    return f"linear Granger {row['linear_granger']:.3f}" + (f", NGC {row['ngc']:.3f}" if row.get("ngc") is not None else "")


def simulated(a: dict) -> str:
    "The adaptation by simulation of a results.json adaptation entry, as the card states it ('' where it has none)"
    if "simulated" not in a: return ""
    return (f", adapted by simulation of {', '.join(a['simulated_systems'])} (`acd train --simulate`) "
            f"{a['simulated']:.3f} ({a['seconds']['simulated']:.0f} s)")


def self_trained(a: dict) -> str:
    "The adaptation by self-training of a results.json adaptation entry, as the card states it ('' where it has none)"
    if "self_trained" not in a: return ""
    return f", self-trained (`acd train --self-train`) {a['self_trained']:.3f} ({a['seconds']['self_training']:.0f} s)"


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", default="_reports/general/run")
    p.add_argument("--results", type=Path, default=None, help="exp_general's results.json")
    p.add_argument("--dest", default=None, help="where the model folder goes (default: the package's pretrained_models/)")
    args = p.parse_args()
    torch.set_num_threads(1)
    loaded = load_model(args.run)
    fresh = simulate_test_set(loaded, 200, seed=1)
    test = {"n_samples": 200, "infer_steps": loaded.infer_steps, "tta_steps": TTA["steps"], "tta_lr": TTA["lr"],
            "data": "fresh springs samples of its mixture, positions x, y only, 5 series (simulate_test_set, seed 1)"}
    for method in ("enc", "enc+tta"):
        res = evaluate(loaded.model, fresh["x"], fresh["edges"], method, loaded.infer_steps, progress=False, **TTA)
        test[method] = summarise_evaluation(res)
    if args.results:
        r = json.loads(args.results.read_text())
        ns = r["parameters"]["n_nodes"]
        test.update(n_nodes=ns, table={s: {n: cell["general"] for n, cell in by_n.items()} for s, by_n in r["table"].items()},
                    note=(f"Enc AUROC zero-shot on {r['parameters']['n_samples']} fresh recordings of "
                          f"{r['parameters']['steps']} steps per system, N and seed, the mean over "
                          f"{len(r['parameters']['seeds'])} seeds (sample seeds from 10,000 on; 2.5 causes per "
                          "series, each system's default sampling interval, no noise or gaps; `reports/cpu/exp_general`). "
                          "N above 30 was never trained on."),
                    notes=[f"NetSim sim3 zero-shot ({r['netsim']['subjects']} subjects, each on its own): "
                           f"{r['netsim']['general']:.3f} (linear Granger {r['netsim']['linear_granger']:.3f})"]
                    + [f"shipped `{s}` model on the same {s} samples ({'positions' if s == 'springs' else 'sin φ'} only, "
                       "the rest derived): " + ", ".join(f"N = {n}: {r['table'][s][str(n)][f'shipped {s}']:.3f}" for n in ns)
                       for s in ("springs", "kuramoto")]
                    + [f"left out of the mixture (a model trained without it, N = 10): {s} {row['left out']:.3f} (this model "
                       f"{row['general']:.3f}, {baselines(row)})" for s, row in r.get("left_out", {}).items()]
                    + [f"a generator written apart from the mixture's simulators (N = 10): {s} {row['general']:.3f} "
                       f"({baselines(row)})" for s, row in r.get("foreign", {}).items()]
                    + ([f"adapted to NetSim without labels: zero-shot {a['zero_shot']:.3f}, Enc+TTA {a['enc+tta']:.3f} "
                        f"({a['tta_steps']} steps, {a['seconds']['enc+tta'] / a['subjects']:.2f} s per subject), fine-tuned "
                        f"with the ELBO alone {a['fine_tuned']:.3f} ({a['seconds']['fine_tuning']:.0f} s)" + simulated(a)
                        + self_trained(a)]
                       if (a := r.get("adaptation")) else [])
                    + [f"adapted without labels to a collection of {s} recordings: zero-shot {a['zero_shot']:.3f}, Enc+TTA "
                       f"{a['enc+tta']:.3f}, fine-tuned with the ELBO alone {a['fine_tuned']:.3f} "
                       f"({a['seconds']['fine_tuning']:.0f} s)" + simulated(a) + self_trained(a)
                       for s, a in r.get("foreign_adaptation", {}).items()])
    folder = export_pretrained(args.run, "general", card_extra={"test": test}, dest=args.dest, overwrite=True)
    size = (folder / "model.pt").stat().st_size
    print(folder, f"model.pt {size / 1e3:.0f} kB", json.dumps({m: test[m]["auroc"] for m in ("enc", "enc+tta")}))
