"""Training throughput of the latent models (hidden temperature, unobserved series): samples per second at `cpu` settings.

usage: .venv/bin/python bench/bench_latent.py [--batches 4] [--threads 1] [--only temperature|unobserved]
Run inside the project environment. Prints one `name: value` line per model: training samples per second
(forward, backward and Adam step on batches of the `cpu` preset's 128 samples, after one warm-up batch).
Settings are those of `exp_temperature` (CNN encoder, hidden 64, springs simulation decoder, one
prediction step) and `exp_unobserved` (MLP encoder, hidden 128, LSTM hidden 128, 10 prediction steps, bf16)
at `cpu` scale, on small simulated datasets in a temporary cache.
"""
import argparse
import os
import tempfile
import time


def samples_per_second(model, x, batches: int, **extras) -> float:
    "Training samples per second of `model` on batches `x (B, N, T, D)` (and per-sample `extras`), after a warm-up step."
    import torch
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    def step():
        opt.zero_grad(set_to_none=True)
        model.loss(x, **extras)["loss"].backward()
        opt.step()
    step()
    start = time.perf_counter()
    for _ in range(batches): step()
    return batches * len(x) / (time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=4, help="timed batches per model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", choices=("temperature", "unobserved"), help="measure one experiment's models only")
    args = ap.parse_args()
    os.environ.setdefault("ACD_DATA_DIR", tempfile.mkdtemp(prefix="acd_bench_"))
    import torch
    from acd_nb.core import get_preset, seed_everything
    from acd_nb.data import DatasetConfig, load_dataset
    from acd_nb.latent_temperature import TEMPERATURE_METHODS, temperature_model
    from acd_nb.latent_unobserved import HIDDEN_MODELS, UnobservedACD
    from acd_nb.sims import SimConfig
    torch.set_num_threads(args.threads)
    preset = get_preset("cpu", "springs")
    sizes = dict(n_train=preset.batch_size, n_valid=8, n_test=8, steps_train=preset.steps_train, steps_test=preset.steps_train)
    if args.only in (None, "temperature"):
        data = load_dataset(DatasetConfig(SimConfig("springs", temperature_alpha=2.0), seed=0, **sizes))
        x = torch.as_tensor(data.train["x"])
        for method in TEMPERATURE_METHODS:
            seed_everything(0)
            model = temperature_model(method, 2.0, data.normalizer.to_dict(), encoder="cnn", n_steps=preset.steps_train,
                                      hidden=64, dtype=preset.dtype, prediction_steps=preset.prediction_steps)
            print(f"temperature_{method}_samples_per_s: {samples_per_second(model, x, args.batches):.0f}", flush=True)
    if args.only in (None, "unobserved"):
        data = load_dataset(DatasetConfig(SimConfig("springs", n_nodes=4, n_unobserved=1), seed=0, **sizes))
        for method in HIDDEN_MODELS:
            seed_everything(0)
            model = UnobservedACD(n_features=4, n_steps=preset.steps_train, encoder="mlp", hidden=preset.hidden, dtype=preset.dtype,
                                  prediction_steps=preset.prediction_steps, n_observed=4, hidden_model=method, lstm_hidden=preset.hidden)
            batch = {k: torch.as_tensor(v) for k, v in model.training_data(data.train).items()}
            extras = {k: batch[k] for k in model.extra_inputs}
            print(f"unobserved_{method}_samples_per_s: {samples_per_second(model, batch['x'], args.batches, **extras):.0f}", flush=True)


if __name__ == "__main__":
    main()
