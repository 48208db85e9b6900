"""Train (or resume) the general model of `--pretrained general` on this machine: `acd_nb.train.train_mixture` with
one torch thread. The run folder's `last.pt` resumes it exactly (the mixture is simulated again from its seeds into
the cache folder); `--minutes` is the total budget, earlier sessions included.

    OMP_NUM_THREADS=1 python tools/train_general.py --out _reports/general/run --minutes 45
"""
import argparse
import json

import torch

from acd_nb.sims import MIXTURE_SYSTEMS, MixtureConfig
from acd_nb.train import train_mixture

# the shipped model's mixture (all systems, N 3-30); 30% of its recordings clean (no noise, no gaps), where the spring
# and phase statistics of the encoder work
MIXTURE = dict(n_steps=(50, 200), batch_size=16, clean=0.3)
MAX_STEPS = 100  # groups cut to their first 100 steps: the decoder's cost grows with T
EDGE_LOSS = 100.0  # weight of the supervised edge loss beside the ELBO (0: the ELBO alone)

if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="_reports/general/run")
    p.add_argument("--cache", default="_reports/general/data", help="where the simulated mixture is cached")
    p.add_argument("--minutes", type=float, default=45.0)
    p.add_argument("--edge-loss", type=float, default=EDGE_LOSS)
    p.add_argument("--no-elbo", action="store_true", help="train the encoder on the edge loss alone (TrainConfig.elbo False)")
    p.add_argument("--groups", type=int, default=1200)
    p.add_argument("--valid-groups", type=int, default=48)
    p.add_argument("--init", help="a checkpoint a new run starts from (a model trained on another mixture)")
    p.add_argument("--lr", type=float, help="learning rate of a new run (default: GENERAL_TRAIN's)")
    p.add_argument("--evidence", action="store_true",
                   help="the encoder reads the generic Granger evidence (ACDConfig.evidence; tools/widen_general.py --evidence)")
    p.add_argument("--value-lags", type=int, default=0,
                   help="the encoder reads the values' Granger statistic at lags 1..L (ACDConfig.value_lags; tools/widen_general.py)")
    p.add_argument("--values-at-lag1", action="store_true",
                   help="the encoder also reads the values' Granger statistic at lag 1 alone (ACDConfig.values_at_lag1)")
    p.add_argument("--systems", default=",".join(MIXTURE_SYSTEMS), help="the mixture's systems, comma-separated")
    p.add_argument("--steps", default=",".join(map(str, MIXTURE["n_steps"])),
                   help="the simulated recordings' lengths, LOW,HIGH (MixtureConfig.n_steps)")
    p.add_argument("--max-steps", type=int, default=MAX_STEPS,
                   help="groups cut to their first MAX_STEPS steps; the model's max_window (longer recordings are read in windows)")
    p.add_argument("--fmri-noise", help="the fMRI-like family's own noise, LOW,HIGH (MixtureConfig.fmri_noise; default none)")
    p.add_argument("--short-steps", type=int,
                   help="every other group cut to SHORT_STEPS steps instead; the model's min_window (train_mixture's short_steps)")
    args = p.parse_args()
    torch.set_num_threads(1)
    res = train_mixture(args.out, MixtureConfig(**{**MIXTURE, "n_steps": tuple(int(t) for t in args.steps.split(",")),
                                                       **({"fmri_noise": tuple(float(v) for v in args.fmri_noise.split(","))}
                                                          if args.fmri_noise else {})},
                                                      systems=tuple(args.systems.split(","))), n_groups=args.groups, n_valid_groups=args.valid_groups,
                        max_steps=args.max_steps, short_steps=args.short_steps, cache_dir=args.cache, init=args.init,
                        model={**({"evidence": True} if args.evidence else {}),
                               **({"value_lags": args.value_lags} if args.value_lags else {}),
                               **({"values_at_lag1": True} if args.values_at_lag1 else {})} or None,
                        train={"minutes": args.minutes, "edge_loss": args.edge_loss, "progress": False,
                               **({"elbo": False} if args.no_elbo else {}),
                               **({"lr": args.lr} if args.lr else {})})
    print(json.dumps(res["history"][-1]))
