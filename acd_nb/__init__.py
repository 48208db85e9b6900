"""Amortized Causal Discovery (Löwe et al., CLeaR 2022) as a literate nbdev library

Modules:

- `acd_nb.baselines`: The six causal-discovery baselines of the paper (linear Granger causality, mutual information, transfer entropy, Neural Granger Causality, eSRU, MPIR) and an optional PCMCI adapter, all behind one interface: `scores = method.fit_score(x)` for one sample `x` of shape `(nodes, time, features)`.
- `acd_nb.cli`: The `acd` command line: `acd demo` runs the main job (shipped models on fresh simulated data); `acd simulate` writes a dataset folder; `acd train` trains on simulated data or such a folder (resumable); `acd infer` reads the causal graphs of users' series files; `acd evaluate` scores a model with 95% confidence intervals.
- `acd_nb.commands`: What the `acd` commands do, as functions: the demo (shipped models on fresh simulated data), writing a dataset folder, training on one, reading the causal graphs of users' series files, and scoring a model with 95% confidence intervals.
- `acd_nb.core`: Conventions shared by the whole package: tensor shapes, the edge convention, the list of ordered pairs, seeding, device choice, paths, atomic writes and the `ci` / `cpu` / `paper` presets.
- `acd_nb.data`: Datasets: cached train/valid/test splits of the simulators, normalisation to [-1, 1] by training statistics, observation noise, fast batch iteration, the Netsim sim3 fMRI data and a loader for users' own series (arrays, .npy/.npz, CSV, pandas).
- `acd_nb.decoders`: The dynamics decoders p(x[t+1] | x[<=t], z): a message-passing MLP decoder (paper eq. 12-14), a recurrent GRU decoder, and simulation decoders that run the true springs and Kuramoto physics differentiably.
- `acd_nb.encoders`: The amortized causal-discovery encoders q(z|x): an MLP encoder (particles, Netsim) and a CNN encoder with attentive pooling (Kuramoto). Both map series `(B, N, T, D)` to edge-type logits `(B, N(N-1), K)`.
- `acd_nb.infer`: Reading causal graphs off a trained model: the amortized encoder (Enc), test-time adaptation through the frozen decoder (TTA), both (Enc+TTA), the global latent graph for single-graph data, and the evaluation protocol.
- `acd_nb.latent_temperature`: ACD under a hidden confounder: a per-sample temperature that scales every spring, modelled by a uniform posterior that feeds the encoder (stop-gradient) and the springs simulation decoder; the Mean and None baselines; temperature-prediction metrics (correlation, 3-bin accuracy, 1-vs-all AUROC, confusion matrix).
- `acd_nb.latent_unobserved`: ACD with an unobserved time series: a bidirectional LSTM predicts the hidden series from the observed ones, and the encoder and decoder treat the prediction as an ordinary series; the Observed, None, Mean and Supervised baselines of the paper share the same class.
- `acd_nb.metrics`: Evaluation metrics: edge AUROC and accuracy over off-diagonal entries, future-prediction MSE per horizon, and means with 95% confidence intervals across seeds.
- `acd_nb.model`: The ACD model: one config dataclass, the encoder q(z|x), Gumbel-softmax edge samples, the decoder p(x[t+1] | x[t], z), and the ELBO (Gaussian NLL + KL to the edge prior).
- `acd_nb.nn`: Building blocks of the encoders and decoders: MLP blocks, node <-> edge message passing over all ordered pairs with index operations, and pair-linear layers that compute the first message layer per node instead of per edge.
- `acd_nb.pretrained`: Trained models as files: one loader for training runs and for the models shipped with the package, the checks and scaling that users' series go through before inference, fresh test data for a model, and model cards.
- `acd_nb.recordings`: A user's recordings as model-ready tensors: files, arrays or DataFrames -> series and feature names, gaps, windows and scaling. The one room `acd train --data` and `acd infer` read a user's data through.
- `acd_nb.reports`: Results as data: the paper's reference numbers in one table, claims computed by each experiment from its own numbers, and the committed reports turned into the results tables of the README and the docs.
- `acd_nb.sims`: Batched, seeded simulators of the two physics datasets of the paper (springs "particles" and Kuramoto oscillators) with directed causal graphs, plus observation noise, a hidden temperature, unobserved particles and a plotting helper for trajectories and (inferred) causal graphs; and the Lorenz-96 and sparse VAR(3) benchmarks of the neural Granger baselines' own papers.
- `acd_nb.train`: One training loop for every ACD variant: Adam with step decay, optional bf16 autocast, validation every epoch, best checkpoint by validation loss, atomic checkpoints with exact mid-epoch resume, a wall-clock budget and a live progress bar."""

__version__ = "0.0.1"
