"""Ensemble training throughput: K models trained by one `fit` call, at the paper's settings.

usage: .venv/bin/python bench/bench_ensemble.py [--models springs_mlp kuramoto_cnn temperature_sim unobserved_lstm]
           [--ks 1 3 9 27] [--steps 40] [--dtype bf16] [--device auto] [--threads 2] [--processes] [--stack auto|on|off|both]
           [--compile off|encoder|model] [--compiled-ks 1 9 27] [--compiled-models springs_mlp]
           [--profile-k 27] [--profile-compile off|encoder|model] [--profile-models springs_mlp] [--bandwidth-tbs 4.8]

Each model is built at the paper's settings (hidden 256, N = 5 (4 observed + 1 hidden for the LSTM model), T = 49,
k = 10; the simulation decoder of the temperature model predicts 1 step) and trained on random data of the right
shape (speed does not depend on the values) for 3 epochs of `--steps` batches of 128 per member; the second and
third epochs are timed (the first absorbs start-up and, on CUDA, the CUDA-graph warm-up and capture).
Prints `name: value` lines, for each model and K: samples/s per member, aggregate samples/s, TFLOP/s (torch's flop
counter on one training step of one member: forward and backward) and, on CUDA, the fraction of the bf16 dense
peak (`--peak-tflops`, default 989: H100/H200 SXM) and how the steps ran (`step_mode`: graph-stacked, graph-streams, graph-serial
or eager), and at K = 1 the same model stepped eagerly (`cuda_graphs=False`).
`ops_per_step`: the aten operations one training step of one member dispatches (forward and backward, views and
allocations left out), about the kernels a GPU launches for it; on CUDA `k1_us_per_op` is the K = 1 step's time
divided by them: where it is a few microseconds whatever the model, the step is bound by its number of kernels, not by
their work. `unfused_mb_per_sample`: the bytes these operations read and write, per sample: the memory traffic of
the step where no two operations are fused; on CUDA `unfused_bound_samples_per_s` is the rate at which that traffic
alone takes all of the memory bandwidth (`--bandwidth-tbs`), which fused (compiled) kernels can pass.
`--profile-k` profiles K members (`torch.profiler`, two epochs, CUDA graphs off, compiled as `--profile-compile`) of
each model (or of those named by `--profile-models`) after its other runs, and prints the operations (on CUDA: kernels)
that took the most time, as `..._profile: <%> <ms> <calls>x <name>`.
`--compile` trains with `TrainConfig.compile` (`encoder`, or `model`: the decoder's repeated step as well);
`--compiled-ks` also trains these K with `compile="model"` after the K loop of each model (or of those named by
`--compiled-models`), each from fresh compiler caches (`torch._dynamo.reset`), printed as
`..._k<K>_compiled_samples_per_s` and `..._k<K>_compiled_step_mode` (K = 1: the encoder and the decoder's step compiled
in place; K > 1 stacked: the stacked step compiled as one graph, `_Stack.member_losses`; compilation happens in the
untimed first epoch).
`--stack` says whether the members step as one model with stacked weights (`TrainConfig.stack_members`: `auto` on
CUDA for compiled members, `on`, `off`; `both`: `on`, and for K > 1 also `off`, printed as `..._unstacked_samples_per_s`, the
side-by-side in one run); the unobserved model cannot stack (its LSTM has no `vmap` rule) and steps member by member.
`--processes` (CPU) also trains the same K members as K separate one-thread processes, two side by side (the way
`make reports` trains them), and prints their aggregate samples/s beside the ensemble's.
"""
import argparse
import os
import subprocess
import sys
import time

import torch
from torch.profiler import ProfilerActivity
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import FlopCounterMode

from acd_nb.core import get_device, seed_everything
from acd_nb.data import Normalizer
from acd_nb.latent_temperature import temperature_model
from acd_nb.latent_unobserved import UnobservedACD, UnobservedConfig
from acd_nb.model import ACD, ACDConfig
from acd_nb.train import TrainConfig, fit

BATCH = 128


def build(name: str, dtype: str, seed: int):
    "The model `name` at the paper's settings, initialised from `seed`."
    seed_everything(seed)
    common = dict(n_features=4, n_steps=49, hidden=256, dtype=dtype)
    if name == "springs_mlp": return ACD(ACDConfig(encoder="mlp", decoder="mlp", **common))
    if name == "kuramoto_cnn": return ACD(ACDConfig(encoder="cnn", decoder="mlp", out_var=5e-5, **common))
    if name == "temperature_sim":
        normalizer = Normalizer.for_system("springs").fit(torch.randn(64, 5, 49, 4)).to_dict()
        return temperature_model("latent", 2.0, normalizer, **common)
    if name == "unobserved_lstm":
        return UnobservedACD(UnobservedConfig(encoder="mlp", n_observed=4, n_hidden=1, hidden_model="latent",
                                              lstm_hidden=256, **common))
    raise SystemExit(f"unknown model {name!r}; choose from {MODELS}")


MODELS = ("springs_mlp", "kuramoto_cnn", "temperature_sim", "unobserved_lstm")


def n_series(name: str) -> int: return 4 if name == "unobserved_lstm" else 5


class OpCounter(TorchDispatchMode):
    """Counts the aten operations that compute something (views and allocations, no kernel on a GPU, left out) and
    the bytes of their tensor inputs and outputs: what the step reads and writes where no two operations are fused"""
    def __init__(self):
        super().__init__()
        self.ops, self.bytes = 0, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if not (func.is_view or func.overloadpacket.__name__.startswith("empty")):
            self.ops += 1
            self.bytes += sum(t.numel() * t.element_size() for t in tree_flatten((args, kwargs, out))[0]
                              if isinstance(t, torch.Tensor))
        return out


def step_cost(name: str, dtype: str, device) -> tuple[float, OpCounter]:
    "FLOPs and aten operations and bytes (`OpCounter`) of one training step (forward and backward) of one member at batch 128."
    model = build(name, dtype, 0).to(device).train()
    x = random_data(name, 1, device)[0]
    with FlopCounterMode(display=False) as counter:
        model.loss(x)["loss"].backward()
    with OpCounter() as ops:
        model.loss(x)["loss"].backward()
    return float(counter.get_total_flops()), ops


def failure(e: Exception) -> str:
    "An exception as one line: its type and the first line of its message."
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


STACK = {"auto": None, "on": True, "off": False, "both": True}
COMPILE = {"off": False, "encoder": "encoder", "model": "model"}  # TrainConfig.compile


def random_data(name: str, steps: int, device="cpu") -> tuple[torch.Tensor, torch.Tensor]:
    "`steps` batches of random training data `(x, graphs)` of the model `name`'s shapes (speed does not depend on values)"
    x = torch.randn(steps * BATCH, n_series(name), 49, 4, device=device)
    return x, torch.zeros(len(x), x.shape[1], x.shape[1], device=device)


def train_members(name: str, seeds, data, dtype: str, device, epochs: int, **train) -> tuple[float, list]:
    """Wall-clock seconds of one `fit` of fresh members (one per seed, built before the clock starts) for `epochs` on
    `data`, and their histories; `train`: further `TrainConfig` fields"""
    models = [build(name, dtype, seed) for seed in seeds]
    cfgs = [TrainConfig(epochs=epochs, batch_size=BATCH, progress=False, seed=seed, device=str(device),
                        checkpoint_every=0, **train) for seed in seeds]
    start = time.perf_counter()
    histories = fit(models, data, None, cfgs)
    return time.perf_counter() - start, histories


def ensemble_rate(name: str, k: int, steps: int, dtype: str, device, cuda_graphs: bool = True,
                  compile: bool | str = False, stack: str = "auto") -> tuple[float, str]:
    "Aggregate training samples/s of `k` members in one `fit` over epochs 2 and 3, and how a GPU ran the steps."
    n, data = steps * BATCH, random_data(name, steps, device)

    def train(epochs: int) -> tuple[float, list]:
        "Wall-clock seconds of `epochs` epochs of fresh models, and the first model's history."
        seconds, histories = train_members(name, range(k), data, dtype, device, epochs, cuda_graphs=cuda_graphs,
                                           compile=compile, stack_members=STACK[stack])
        return seconds, histories[0]

    if torch.device(device).type == "cuda":  # each model is charged the epochs' wall-clock (acd_nb.train)
        history = train(3)[1]
        return k * 2 * n / (60 * (history[2]["minutes"] - history[0]["minutes"])), history[-1]["step_mode"]
    # on the CPU models are charged their own turns, which may overlap (threads): the wall-clock of epochs 2-3 instead,
    # compiled code (`compile`) taken from torch's caches, filled by a first run
    if compile: train(1)
    return k * 2 * n / (train(3)[0] - train(1)[0]), "eager"


def profile(name: str, k: int, steps: int, dtype: str, device, compile: bool | str, stack: str, top: int = 20):
    """Prints the operations that took the most time in two epochs of `k` members trained by one `fit`, by their own
    time on the GPU (in a CPU run: CPU time, compilation included), under `torch.profiler`; CUDA graphs off, so that
    each kernel shows (a graph replays the same kernels). Compilation runs on the CPU and launches no kernel."""
    data, on_gpu = random_data(name, steps, device), device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    with torch.profiler.profile(activities=activities) as prof:
        train_members(name, range(k), data, dtype, device, 2, cuda_graphs=False, compile=compile,
                      stack_members=STACK[stack])
    events = prof.key_averages()
    own = (lambda e: e.self_device_time_total) if on_gpu else (lambda e: e.self_cpu_time_total)
    total = sum(own(e) for e in events) or 1
    tag = f"{name}_k{k}{'_compiled' if compile else ''}_profile"
    print(f"{tag}_ms_per_step: {total / 1e3 / (2 * steps):.2f}  ({'device' if on_gpu else 'cpu'} time, all members)")
    for e in sorted(events, key=own, reverse=True)[:top]:
        print(f"{tag}: {100 * own(e) / total:5.1f} % {own(e) / 1e3:9.1f} ms {e.count:7d}x  {e.key[:100]}")


def processes_rate(name: str, k: int, steps: int, dtype: str) -> float:
    """Aggregate samples/s of `k` members as separate one-thread processes, two at a time (`make reports`' way)

    Each process times its second and third epochs, as the ensemble does; the processes of a pair run side by side,
    so a pair's timed seconds are the longer of the two."""
    cmd = [sys.executable, __file__, "--one", name, "--steps", str(steps), "--dtype", dtype]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    seconds = 0.0
    for first in range(0, k, 2):
        pair = [subprocess.Popen(cmd + ["--seed", str(s)], env=env, stdout=subprocess.PIPE, text=True)
                for s in range(first, min(first + 2, k))]
        seconds += max(float(p.communicate()[0].split()[-1]) for p in pair)
    return k * 2 * steps * BATCH / seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--ks", nargs="+", type=int, default=[1, 3, 9, 27])
    ap.add_argument("--steps", type=int, default=40, help="batches of 128 per member and epoch")
    ap.add_argument("--dtype", default="bf16", choices=("fp32", "bf16"))
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    ap.add_argument("--peak-tflops", type=float, default=989.0, help="the GPU's dense bf16 peak")
    ap.add_argument("--bandwidth-tbs", type=float, default=4.8, help="the GPU's memory bandwidth, TB/s (H200: 4.8)")
    ap.add_argument("--max-seconds", type=float, default=None, help="skip the larger K of a model once one run took this long")
    ap.add_argument("--processes", action="store_true", help="CPU: also the members as separate processes")
    ap.add_argument("--compile", default="off", choices=tuple(COMPILE),
                    help="TrainConfig.compile: the encoder, or the model (encoder and the decoder's repeated step)")
    ap.add_argument("--compiled-ks", nargs="*", type=int, default=[], help='also these K with compile="model"')
    ap.add_argument("--compiled-models", nargs="*", choices=MODELS, help="the models --compiled-ks trains (default: all)")
    ap.add_argument("--stack", default="auto", choices=tuple(STACK),
                    help="members as one model with stacked weights (TrainConfig.stack_members; auto: on CUDA when compiled)")
    ap.add_argument("--profile-k", nargs="*", type=int, default=[],
                    help="also profile these K (two epochs, CUDA graphs off) after each model's runs")
    ap.add_argument("--profile-compile", default="model", choices=tuple(COMPILE), help="TrainConfig.compile of --profile-k")
    ap.add_argument("--profile-models", nargs="*", choices=MODELS, help="the models --profile-k profiles (default: all)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.threads: torch.set_num_threads(args.threads)
    if args.one:  # a worker of --processes: one member, three epochs
        build_and_fit_one(args.one, args.steps, args.dtype, args.seed)
        return
    device = get_device(args.device)
    print(f"device: {torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'}")
    print(f"threads: {torch.get_num_threads()}")
    print(f"dtype: {args.dtype}")
    print(f"compile: {args.compile}")
    print(f"compiled_ks: {args.compiled_ks}")
    print(f"stack: {args.stack}")
    for name in args.models:
        flops, ops = step_cost(name, args.dtype, device)
        print(f"{name}_gflop_per_sample: {flops / BATCH / 1e9:.3f}")
        print(f"{name}_ops_per_step: {ops.ops}")
        print(f"{name}_unfused_mb_per_sample: {ops.bytes / BATCH / 1e6:.1f}")
        if device.type == "cuda":  # the rate at which memory traffic alone, unfused, would hold the step
            print(f"{name}_unfused_bound_samples_per_s: {args.bandwidth_tbs * 1e12 * BATCH / ops.bytes:.0f}")
        sys.stdout.flush()
        parts = COMPILE[args.compile]
        for k in args.ks:
            start = time.perf_counter()
            try: rate, mode = ensemble_rate(name, k, args.steps, args.dtype, device, compile=parts, stack=args.stack)
            except Exception as e:  # one model's failure (e.g. out of memory) leaves the others measured
                print(f"{name}_k{k}: failed: {failure(e)}", flush=True)
                break
            tflops = rate / BATCH * flops / 1e12
            print(f"{name}_k{k}_samples_per_s_per_model: {rate / k:.0f}")
            print(f"{name}_k{k}_samples_per_s: {rate:.0f}")
            print(f"{name}_k{k}_tflops: {tflops:.2f}")
            if device.type == "cuda":
                print(f"{name}_k{k}_peak_fraction: {tflops / args.peak_tflops:.4f}")
                print(f"{name}_k{k}_step_mode: {mode}")
                if k == 1:  # the same model stepped eagerly: what the graph saves
                    print(f"{name}_k1_us_per_op: {1e6 * BATCH / rate / ops.ops:.2f}")
                    print(f"{name}_k1_eager_samples_per_s: {ensemble_rate(name, 1, args.steps, args.dtype, device, False)[0]:.0f}")
                torch.cuda.empty_cache()
            if args.stack == "both" and k > 1:
                unstacked = ensemble_rate(name, k, args.steps, args.dtype, device, compile=parts, stack="off")[0]
                print(f"{name}_k{k}_unstacked_samples_per_s: {unstacked:.0f}")
            if args.processes and device.type == "cpu":
                print(f"{name}_k{k}_processes_samples_per_s: {processes_rate(name, k, args.steps, args.dtype):.0f}")
            sys.stdout.flush()
            if args.max_seconds and time.perf_counter() - start > args.max_seconds: break
        compiled = args.compiled_ks if parts != "model" and name in (args.compiled_models or args.models) else ()
        for k in compiled:  # after the K loop: its time does not count there
            torch._dynamo.reset()  # fresh caches: no run reuses a graph an earlier one compiled
            try:
                compiled_rate, compiled_mode = ensemble_rate(name, k, args.steps, args.dtype, device,
                                                             compile="model", stack=args.stack)
                print(f"{name}_k{k}_compiled_samples_per_s: {compiled_rate:.0f}")
                if device.type == "cuda": print(f"{name}_k{k}_compiled_step_mode: {compiled_mode}")
            except Exception as e:
                print(f"{name}_k{k}_compiled: failed: {failure(e)}")
                break
            sys.stdout.flush()
        for k in args.profile_k if name in (args.profile_models or args.models) else ():
            torch._dynamo.reset()
            try: profile(name, k, args.steps, args.dtype, device, COMPILE[args.profile_compile], args.stack)
            except Exception as e: print(f"{name}_k{k}_profile: failed: {failure(e)}")
            sys.stdout.flush()


def build_and_fit_one(name: str, steps: int, dtype: str, seed: int):
    "One member alone on the CPU, three epochs; prints the seconds of the last two (the worker of `--processes`)."
    torch.set_num_threads(1)
    history = train_members(name, [seed], random_data(name, steps), dtype, "cpu", 3)[1][0]
    print(60 * (history[2]["minutes"] - history[0]["minutes"]))


if __name__ == "__main__":
    main()
