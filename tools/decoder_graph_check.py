"""Does a model's decoder prefer the true graph? Its NLL on fresh simulations under the true, the full and the empty graph.

Label-free adaptation (Enc+TTA, `acd train --init`) moves the graph towards a lower NLL; where the decoder's NLL is
not lowest at the true graph, it can only move away from it. Prints one line per system and N: the mean NLL per
node of `--samples` fresh recordings under each graph (the graph given as near-one-hot edge types, the encoder
skipped), and which graph is lowest.

    OMP_NUM_THREADS=1 python tools/decoder_graph_check.py --model general --systems springs kuramoto fmri --nodes 5 10
"""
import argparse

import numpy as np
import torch

from acd_nb.data import fill_missing
from acd_nb.nn import pair_index
from acd_nb.pretrained import load_model, prepare_series
from acd_nb.sims import OBSERVED_FEATURES, SimConfig, simulate


def graph_logits(edges: np.ndarray, n: int) -> torch.Tensor:
    "Edge-type logits `(B, N(N-1), 2)` that put the graph `edges (B, N, N)` almost surely"
    send, recv = pair_index(n, "cpu")
    on = torch.as_tensor(np.asarray(edges, dtype=np.float32))[:, send, recv]
    return torch.stack([torch.zeros_like(on), 16 * on - 8], -1)


def nll_by_graph(loaded, system: str, n: int, samples: int, steps: int, seed: int) -> dict[str, float]:
    "Mean NLL per node of fresh `system` recordings under the true, full and empty graph"
    sim = simulate(SimConfig(system=system, n_nodes=n, n_steps=steps), samples, seed=seed)
    scaled, _ = prepare_series(loaded, sim["x"][..., list(OBSERVED_FEATURES[system])])
    x, observed = (torch.as_tensor(a) for a in fill_missing(scaled, empty="zero"))
    graphs = {"true": sim["edges"], "full": np.broadcast_to(1 - np.eye(n), sim["edges"].shape),
              "empty": np.zeros_like(sim["edges"])}
    out = {}
    with torch.no_grad():
        for name, edges in graphs.items():
            torch.manual_seed(seed)
            out[name] = float(loaded.model.loss(x, observed=observed.bool(), logits=graph_logits(edges, n))["nll"])
    return out


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="general", help="a shipped model's name or a run folder")
    p.add_argument("--systems", nargs="+", default=["springs", "kuramoto", "var_nonlinear", "fmri"])
    p.add_argument("--nodes", nargs="+", type=int, default=[5, 10])
    p.add_argument("--samples", type=int, default=32)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--seed", type=int, default=5)
    args = p.parse_args()
    torch.set_num_threads(1)
    loaded = load_model(args.model)
    loaded.model.eval()
    for system in args.systems:
        for n in args.nodes:
            nll = nll_by_graph(loaded, system, n, args.samples, args.steps, args.seed)
            print(f"{system} N={n}: " + "  ".join(f"{k} {v:.1f}" for k, v in nll.items())
                  + f"  lowest: {min(nll, key=nll.get)}", flush=True)
