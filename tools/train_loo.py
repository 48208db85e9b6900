"""Train the leave-one-out models of `nbs/exp_general.ipynb` (b) side by side, one process per left-out system, each
with `acd_nb.train.train_mixture` exactly as the notebook calls it (the general model's mixture, seeds, objective and
batch size; the first `--groups` groups with the system's own dropped). The notebook reuses the run folders:
copy them to `<out_dir>/loo/<system>` and run it with `loo_minutes` no larger than the minutes they trained, and it
scores them without training on.

    python tools/train_loo.py --out _reports/cpu/exp_general/loo --minutes 6 --device cuda --threads 2

`--model` names the general model whose mixture and recipe they follow (a shipped name, or a model or run folder,
as the notebook's `model` parameter): a run still training gives the models its successor will be scored with.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

GROUPS, VALID_GROUPS = 600, 48  # exp_general's `cpu` scale: loo_groups, loo_valid_groups


def train_one(out: Path, model: str, system: str, minutes: float, device: str, threads: int, groups: int,
              valid_groups: int):
    "One leave-one-out model in this process, as exp_general's (b) trains it."
    import torch

    from acd_nb.train import train_mixture
    torch.set_num_threads(threads)
    general, mixture = general_mixture(model)
    mix = general.info["data"]
    # as the notebook: the general model's objective and batch size, the learning rate of a run from scratch
    train = {k: v for k, v in (general.info["meta"].get("train") or {}).items() if k in ("edge_loss", "elbo", "batch_size")}
    run = train_mixture(out / system, mixture, n_groups=groups, n_valid_groups=valid_groups, max_steps=mix["max_steps"],
                        short_steps=mix.get("short_steps"), cache_dir=out / "data", leave_out=(system,),
                        model=general.model.cfg.to_dict(),
                        train={**train, "minutes": minutes, "progress": False, "device": device})
    last = run["history"][-1]
    print(json.dumps({"system": system, "device": device, "epochs": len(run["history"]), "minutes": last["minutes"],
                      "best_valid_auroc": max(h.get("valid_auroc") or 0 for h in run["history"])}), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=Path("_reports/cpu/exp_general/loo"))
    p.add_argument("--model", default="general", help="the general model whose mixture they leave systems out of")
    p.add_argument("--systems", nargs="*", help="systems left out, one model each (default: every system of the mixture)")
    p.add_argument("--minutes", type=float, default=12.0, help="each model's training budget (a resumed run's included)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1, help="torch threads per process")
    p.add_argument("--groups", type=int, default=GROUPS)
    p.add_argument("--valid-groups", type=int, default=VALID_GROUPS)
    p.add_argument("--sim-workers", type=int, default=os.cpu_count(), help="processes simulating a mixture not cached yet")
    p.add_argument("--one", help=argparse.SUPPRESS)  # a child process: train this system
    args = p.parse_args()
    if args.one:
        return train_one(args.out, args.model, args.one, args.minutes, args.device, args.threads, args.groups, args.valid_groups)
    systems = general_mixture(args.model)[1].systems
    args.systems = args.systems or list(systems)
    unknown = sorted(set(args.systems) - set(systems))
    if unknown: sys.exit(f"train_loo: unknown systems {unknown}; the mixture's are {list(systems)}")
    # the cached mixture is simulated once, before the processes that read it start
    tic = time.perf_counter()
    simulate_groups(args.out, args.model, args.groups, args.valid_groups, args.sim_workers)
    print(f"mixture ready in {args.out / 'data'} ({time.perf_counter() - tic:.0f} s)", flush=True)
    start = time.perf_counter()
    common = ["--out", str(args.out), "--model", args.model, "--minutes", str(args.minutes), "--device", args.device,
              "--threads", str(args.threads), "--groups", str(args.groups), "--valid-groups", str(args.valid_groups)]
    children = [subprocess.Popen([sys.executable, __file__, "--one", s, *common]) for s in args.systems]
    codes = [c.wait() for c in children]
    print(f"trained {len(children)} models in {time.perf_counter() - start:.0f} s; exit codes {codes}", flush=True)
    if any(codes): sys.exit(1)


def general_mixture(model: str = "general"):
    "The general model `model` (a shipped name, a model or run folder) and the `MixtureConfig` it was trained on."
    from acd_nb.pretrained import load_model
    from acd_nb.sims import MixtureConfig
    general = load_model(model)
    mixture = {k: tuple(v) if isinstance(v, list) else v for k, v in general.info["data"]["mixture"].items()}
    return general, MixtureConfig(**mixture)


def simulate_groups(out: Path, model: str, groups: int, valid_groups: int, workers: int):
    "The mixture's training and validation groups (train_mixture's default seeds 0 and 1) cached in `out/data`."
    from acd_nb.train import mixture_groups
    mixture = general_mixture(model)[1]
    mixture_groups(mixture, groups, 0, out / "data", workers=workers)
    mixture_groups(mixture, valid_groups, 1, out / "data", workers=workers)


if __name__ == "__main__":
    main()
