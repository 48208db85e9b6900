"""Carry the general model's training state over to an encoder with more pair statistics.

`acd_nb.encoders.PairStatsEncoder` gained pair statistics after `training/general` had trained without them: the
spring statistics (`laplacian_wald`, two per pair and direction) after 13 epochs, the phase-coupling statistics
(`phase_wald`, one per value feature) after 23. Each time this inserted the new columns, which the encoder appends at
the end of each direction's pair block, into the first layer of the encoder's edge MLP as zeros (weights and Adam
moments), so the widened model computes exactly what the old one did and training goes on from there instead of
from scratch:

    python tools/widen_general.py training/general/last.pt training/general/best.pt acd_nb/pretrained_models/general/model.pt

With `--evidence` it writes a new checkpoint (`--out`, weights only: a run starts from it with `--init` and a
fresh Adam state) whose config adds the generic Granger evidence (`ACDConfig.evidence`): its z-scores widen the first
layer as above, and its two parameters in the edge logit take their initial values, so the edge logit is the old one
plus the weighted evidence and training follows:

    python tools/widen_general.py --evidence training/general/best.pt --out _reports/general/evidence_init.pt

`--value-lags L` does the same for the Granger statistic of the values at lags 1..L (`ACDConfig.value_lags`, one
column per direction, after the phase statistics and before the evidence): the widened model's edge logits are the old
ones. `--values-at-lag1` adds the values' statistic at lag 1 alone (`ACDConfig.values_at_lag1`) the same way, after
the lags-1..L column:

    python tools/widen_general.py --values-at-lag1 training/general_lags/best.pt --out _reports/lag1/init.pt
"""
import argparse
from pathlib import Path

import torch

from acd_nb.core import atomic_path
from acd_nb.encoders import EVIDENCE
from acd_nb.model import ACD, ACDConfig

LAYER = "encoder.edge1.0.weight"

def widened(weight: torch.Tensor, n_pair_old: int, n_pair_new: int, at: int) -> torch.Tensor:
    "Columns [pair i->j, pair j->i, nodes] with zeros at column `at` of each pair block: `(H, old)` -> `(H, new)`"
    added = weight.new_zeros(weight.shape[0], n_pair_new - n_pair_old)
    a, b = weight[:, :n_pair_old], weight[:, n_pair_old:2 * n_pair_old]
    return torch.cat([a[:, :at], added, a[:, at:], b[:, :at], added, b[:, at:], weight[:, 2 * n_pair_old:]], 1)

def widen_checkpoint(path: str, evidence: bool = False, out: str | None = None, value_lags: int = 0,
                     values_at_lag1: bool = False):
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    had_evidence = ckpt["config"].get("evidence", False)
    added_config = {**({"evidence": True} if evidence else {}), **({"value_lags": value_lags} if value_lags else {}),
                    **({"values_at_lag1": True} if values_at_lag1 else {})}
    if added_config:
        ckpt = {"config": {**ckpt["config"], **added_config}, "model": ckpt["model"]}
    model = ACD(ACDConfig(**ckpt["config"]))
    names = [name for name, _ in model.named_parameters()]
    new_in, old_in = model.state_dict()[LAYER].shape[1], ckpt["model"][LAYER].shape[1]
    if new_in == old_in: raise SystemExit(f"{path}: already widened ({old_in} inputs)")
    enc = model.encoder
    n_pair_new = enc.pair_features(torch.zeros(1, 2, enc.min_steps(), enc.n_features))[0].shape[-1]   # per direction
    n_pair_old = n_pair_new - (new_in - old_in) // 2
    at = n_pair_old - (len(EVIDENCE) if had_evidence else 0)               # the encoder keeps the evidence last
    ckpt["model"][LAYER] = widened(ckpt["model"][LAYER], n_pair_old, n_pair_new, at)
    added = {k: v for k, v in model.state_dict().items() if k not in ckpt["model"]}   # the evidence's, at init
    model.load_state_dict({**ckpt["model"], **added})                      # every other shape must already agree
    ckpt["model"] = model.state_dict()
    if "optimizer" in ckpt:
        state = ckpt["optimizer"]["state"][names.index(LAYER)]
        for key in ("exp_avg", "exp_avg_sq"):
            if state[key].shape[1] != old_in: raise SystemExit(f"{path}: optimizer state {key} is not {LAYER}'s")
            state[key] = widened(state[key], n_pair_old, n_pair_new, at)
    target = out or path
    with atomic_path(target) as tmp: torch.save(ckpt, tmp)
    print(f"{target}: {LAYER} {old_in} -> {new_in} inputs" + (f", {sorted(added)} added" if added else ""))

if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoints", nargs="+")
    p.add_argument("--evidence", action="store_true", help="add the generic Granger evidence (one checkpoint, --out)")
    p.add_argument("--value-lags", type=int, default=0,
                   help="add the Granger statistic of the values at lags 1..L (one checkpoint, --out)")
    p.add_argument("--values-at-lag1", action="store_true",
                   help="add the Granger statistic of the values at lag 1 alone (one checkpoint, --out)")
    p.add_argument("--out", help="where the widened checkpoint goes (never over an existing file)")
    args = p.parse_args()
    if args.evidence or args.value_lags or args.values_at_lag1:
        if len(args.checkpoints) != 1 or not args.out:
            p.error("--evidence, --value-lags and --values-at-lag1 widen one checkpoint into --out")
        if Path(args.out).exists(): p.error(f"{args.out} exists; choose another --out")
        widen_checkpoint(args.checkpoints[0], args.evidence, args.out, args.value_lags, args.values_at_lag1)
    else:
        for path in args.checkpoints: widen_checkpoint(path)
