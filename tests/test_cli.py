"The `acd` command as a user runs it: simulate -> train -> infer / evaluate, and one-line errors (exit 2) for bad input."
import argparse
import json
import warnings
import os
import shutil
import subprocess
import sys
from pathlib import Path
import time

import numpy as np
import pandas as pd
import pytest
import torch

from acd_nb.cli import main
from conftest import BIN

SIZES = ["--n-train", "64", "--n-valid", "16", "--n-test", "8", "--steps-train", "20", "--steps-test", "40"]
NAMES = ["sun", "moon", "tide", "wind", "rain"]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    "A springs dataset folder with only the x coordinate (one feature per series, like a CSV file) and a 1-epoch model on it."
    root = tmp_path_factory.mktemp("cli")
    with pytest.MonkeyPatch.context() as mp:
        if "ACD_DATA_DIR" not in os.environ: mp.setenv("ACD_DATA_DIR", str(tmp_path_factory.getbasetemp() / "acd_data"))
        assert main(["simulate", "springs", "--out", str(root / "data"), *SIZES, "--features", "0", "--export", "3"]) == 0
        assert main(["train", "--data", str(root / "data"), "--preset", "ci", "--out", str(root / "run"),
                     "--epochs", "1", "--hidden", "8"]) == 0
    return root


def named_csv(work, path, n_steps=40, columns=NAMES, time_column=None):
    "An exported test sample with its columns renamed (and optionally a time column), as a user's CSV file."
    table = pd.read_csv(work / "data" / "samples" / "test_000.csv").head(n_steps)
    table = table.iloc[:, :len(columns)]
    table.columns = columns
    if time_column: table.insert(0, time_column, np.arange(len(table)) * 0.1)
    table.to_csv(path, index=False)
    return path


def test_simulate_writes_a_dataset_folder(work):
    assert sorted(p.name for p in (work / "data").iterdir()) == [
        ".written-by-acd", "config.json", "normalizer.json", "samples", "test.npz", "train.npz", "true_graphs", "valid.npz"]
    with np.load(work / "data" / "train.npz") as z: assert z["x"].shape == (64, 5, 20, 1)
    meta = json.loads((work / "data" / "config.json").read_text())
    assert (meta["system"], meta["features"], meta["feature_names"]) == ("springs", [0], ["x"])
    assert list(pd.read_csv(work / "data" / "samples" / "test_002.csv").columns) == ["x0", "x1", "x2", "x3", "x4"]
    assert json.loads((work / "run" / "run.json").read_text())["normalizer"]["groups"] == [[0]]


def test_infer_csv_writes_named_matrix_and_graph(work, tmp_path, capsys):
    src = named_csv(work, tmp_path / "my recording.csv", time_column="time")
    assert main(["infer", "--model", str(work / "run"), "--input", str(src), "--time-column", "time",
                 "--method", "enc+tta", "--tta-steps", "2", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert ("note: model 'run' (MLP encoder) reads 20 time steps at once: the 40 steps are read in 3 windows 10 steps "
            "apart, their edge probabilities averaged") in out
    assert "my_recording:" in out and "edge(s) with p > 0.5" in out
    table = pd.read_csv(tmp_path / "out" / "my_recording_edges.csv", index_col=0)
    assert list(table.index) == NAMES and list(table.columns) == NAMES and table.index.name == "cause \\ effect"
    assert np.allclose(np.diag(table.to_numpy()), 0) and ((table.to_numpy() >= 0) & (table.to_numpy() <= 1)).all()
    assert (tmp_path / "out" / "my_recording_graph.png").stat().st_size > 20_000
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["names"] == NAMES and summary["method"] == "enc+tta" and summary["n_steps_used"] == 40



def test_infer_stride_sets_the_windows(work, tmp_path, capsys):
    "--stride: steps between the MLP encoder's windows (default half its 20 steps); beyond the window: refused, nothing written."
    from acd_nb.infer import infer
    from acd_nb.pretrained import load_model, prepare_series
    src = named_csv(work, tmp_path / "rec.csv")
    assert main(["infer", "--model", str(work / "run"), "--input", str(src), "--stride", "5", "--out", str(tmp_path / "o")]) == 0
    assert "the 40 steps are read in 5 windows 5 steps apart" in capsys.readouterr().out
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["stride"] == 5
    loaded = load_model(work / "run")
    x, _ = prepare_series(loaded, pd.read_csv(src).to_numpy().T[None, :, :, None])
    written = pd.read_csv(tmp_path / "o" / "rec_edges.csv", index_col=0).to_numpy()
    assert np.allclose(written, infer(loaded.model, x, stride=5)[0].numpy(), atol=1e-6)
    assert not np.allclose(written, infer(loaded.model, x)[0].numpy(), atol=1e-4)  # other windows, other numbers
    assert main(["infer", "--model", str(work / "run"), "--input", str(src), "--stride", "21", "--out", str(tmp_path / "o2")]) == 2
    assert "stride must be between 1 and the encoder's window of 20 steps, got 21" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists()

def test_infer_recordings_with_gaps(work, tmp_path, capsys):
    "Empty CSV cells and NaN in .npz files are missing values: inferred from what was observed, counted per series."
    table = pd.read_csv(named_csv(work, tmp_path / "full.csv"))
    table.loc[3:9, "moon"] = np.nan
    table.loc[[0, 20, 33], "rain"] = np.nan
    table.to_csv(tmp_path / "gaps.csv", index=False)
    assert ",," in (tmp_path / "gaps.csv").read_text()  # written as empty cells
    np.savez(tmp_path / "gaps.npz", x=table.to_numpy().T[None, :, :, None], names=np.array(NAMES))
    for src in ("gaps.csv", "gaps.npz"):
        assert main(["infer", "--model", str(work / "run"), "--input", str(tmp_path / src), "--method", "enc+tta",
                     "--tta-steps", "2", "--out", str(tmp_path / f"out_{src[-3:]}")]) == 0
        out = capsys.readouterr().out
        assert f"note: {src}: missing values per series: sun 0, moon 7, tide 0, wind 0, rain 3" in out
        assert f"note: {src}: 10 of 200 values missing (5.0%)" in out
        probs = pd.read_csv(tmp_path / f"out_{src[-3:]}" / "gaps_edges.csv", index_col=0).to_numpy()
        assert np.isfinite(probs).all() and ((probs >= 0) & (probs <= 1)).all()


def test_simulate_and_train_with_gaps(tmp_path, capsys):
    "`acd simulate --missing-rate` writes recordings with gaps; `acd train --data` trains a mask-reading model on them."
    data, run = tmp_path / "gappy", tmp_path / "run"
    assert main(["simulate", "springs", "--out", str(data), *SIZES, "--missing-rate", "0.3", "--missing-kind", "gaps",
                 "--export", "1"]) == 0
    assert "of the training values missing" in capsys.readouterr().out
    with np.load(data / "train.npz") as z: assert 0.15 < np.isnan(z["x"]).mean() < 0.45
    with np.load(data / "samples" / "test_000.npz") as z: assert np.isnan(z["x"]).any()  # exported with its gaps
    assert main(["train", "--data", str(data), "--preset", "ci", "--out", str(run), "--epochs", "1", "--hidden", "8"]) == 0
    meta = json.loads((run / "run.json").read_text())
    assert meta["model"]["mask_input"] and meta["data"]["missing_kind"] == "gaps" and meta["data"]["missing_rate"] == 0.3
    assert main(["evaluate", "--model", str(run)]) == 0
    assert "AUROC" in capsys.readouterr().out


def test_infer_folder_and_fewer_series(work, tmp_path, capsys):
    assert main(["infer", "--model", str(work / "run"), "--input", str(work / "data" / "samples"),
                 "--out", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").glob("*_edges.csv")) == [f"test_00{k}_edges.csv" for k in range(3)]
    src = named_csv(work, tmp_path / "three.csv", columns=NAMES[:3])
    assert main(["infer", "--model", str(work / "run"), "--input", str(src), "--out", str(tmp_path / "out3")]) == 0
    assert "was trained on 5 series and three.csv has 3" in capsys.readouterr().out  # a note, not an error
    assert pd.read_csv(tmp_path / "out3" / "three_edges.csv", index_col=0).shape == (3, 3)


def test_infer_many_series_without_figures_and_as_heat_map(work, tmp_path):
    rng = np.random.default_rng(0)
    wide = pd.DataFrame(rng.normal(size=(20, 25)).cumsum(0), columns=[f"region {k}" for k in range(25)])
    wide.to_csv(tmp_path / "wide.csv", index=False)
    assert main(["infer", "--model", str(work / "run"), "--input", str(tmp_path / "wide.csv"), "--out", str(tmp_path / "o1"),
                 "--no-figures"]) == 0
    assert sorted(p.name for p in (tmp_path / "o1").iterdir()) == [".written-by-acd", "summary.json", "wide_edges.csv"]
    assert json.loads((tmp_path / "o1" / "summary.json").read_text())["samples"][0]["graph_png"] is None
    start = time.perf_counter()
    assert main(["infer", "--model", str(work / "run"), "--input", str(tmp_path / "wide.csv"), "--out", str(tmp_path / "o2")]) == 0
    assert time.perf_counter() - start < 20  # 25 series: a heat map, not the slow circle drawing (56 s for 200 series)
    assert (tmp_path / "o2" / "wide_graph.png").stat().st_size > 10_000


def test_infer_tells_a_dropped_index_column_with_its_notes(work, tmp_path, capsys):
    "A CSV written with pandas' index: the index column is dropped, and acd says so among its notes."
    table = pd.read_csv(named_csv(work, tmp_path / "plain.csv"))
    table.to_csv(tmp_path / "indexed.csv")  # index=True: an unnamed first column 0, 1, 2, ...
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing escapes as a raw Python warning
        assert main(["infer", "--model", str(work / "run"), "--input", str(tmp_path / "indexed.csv"),
                     "--out", str(tmp_path / "o"), "--no-figures"]) == 0
    out = capsys.readouterr().out
    assert "warning: " in out and "dropped the unnamed first column" in out
    assert list(pd.read_csv(tmp_path / "o" / "indexed_edges.csv", index_col=0).columns) == list(table.columns)


def test_infer_warns_when_input_is_prepared_another_way(tmp_path, capsys):
    "The paper's reference Kuramoto layout fed to the shipped Kuramoto model: a warning names the rate feature."
    from acd_nb.sims import SimConfig, simulate
    reference = simulate(SimConfig(system="kuramoto", paper_compat=True, n_steps=99), 2, seed=3)["x"]
    np.savez(tmp_path / "reference_layout.npz", x=reference)
    assert main(["infer", "--pretrained", "kuramoto", "--input", str(tmp_path / "reference_layout.npz"),
                 "--out", str(tmp_path / "o"), "--no-figures"]) == 0
    out = capsys.readouterr().out
    assert "warning: feature 'dphi_dt'" in out and "sin_phi'" not in out and "note: warning" not in out
    ours = simulate(SimConfig(system="kuramoto", n_steps=99), 2, seed=3)["x"]
    np.savez(tmp_path / "our_layout.npz", x=ours)
    assert main(["infer", "--pretrained", "kuramoto", "--input", str(tmp_path / "our_layout.npz"),
                 "--out", str(tmp_path / "o2"), "--no-figures"]) == 0
    assert "warning" not in capsys.readouterr().out


def test_infer_springs_positions_from_a_csv_with_the_shipped_model(tmp_path, capsys):
    "Positions only, one <particle>.<x|y> column each (what a tracker records): velocities are derived, the graph is found."
    from acd_nb.metrics import edge_auroc
    from acd_nb.sims import SimConfig, simulate
    sim = simulate(SimConfig(system="springs", n_steps=49), 8, seed=5)
    for k, sample in enumerate(sim["x"]):
        columns = {f"p{i + 1}.{axis}": sample[i, :, a] for i in range(5) for a, axis in enumerate("xy")}
        pd.DataFrame(columns).to_csv(tmp_path / f"track_{k}.csv", index=False)
    assert main(["infer", "--pretrained", "springs", "--input", str(tmp_path), "--out", str(tmp_path / "o"), "--no-figures"]) == 0
    assert "read as positions x, y: velocities vx, vy derived" in capsys.readouterr().out
    probs = np.stack([pd.read_csv(tmp_path / "o" / f"track_{k}_edges.csv", index_col=0).to_numpy() for k in range(8)])
    assert list(pd.read_csv(tmp_path / "o" / "track_0_edges.csv", index_col=0).index) == [f"p{i}" for i in range(1, 6)]
    assert edge_auroc(probs, sim["edges"]) > 0.9
    for k, sample in enumerate(sim["x"]):  # the same positions, y before x: read by name, not by position
        pd.DataFrame({f"p{i + 1}.{axis}": sample[i, :, a] for i in range(5) for a, axis in reversed(list(enumerate("xy")))}
                     ).to_csv(tmp_path / f"track_{k}.csv", index=False)
    assert main(["infer", "--pretrained", "springs", "--input", str(tmp_path), "--out", str(tmp_path / "o2"), "--no-figures"]) == 0
    assert "features reordered from y, x to x, y" in capsys.readouterr().out
    swapped = np.stack([pd.read_csv(tmp_path / "o2" / f"track_{k}_edges.csv", index_col=0).to_numpy() for k in range(8)])
    np.testing.assert_allclose(swapped, probs, atol=1e-6)


def test_infer_kuramoto_from_a_csv_of_sin_phi_with_the_shipped_model(tmp_path, capsys):
    "One column of sin φ per oscillator (what a recording holds): rate, phase and ω are derived, the graph is found."
    from acd_nb.metrics import edge_auroc
    from acd_nb.sims import SimConfig, simulate
    sim = simulate(SimConfig(system="kuramoto", n_steps=99), 8, seed=5)
    for k, sample in enumerate(sim["x"]):
        pd.DataFrame({f"osc{i + 1}": sample[i, :, 1] for i in range(5)}).to_csv(tmp_path / f"rec_{k}.csv", index=False)
    assert main(["infer", "--pretrained", "kuramoto", "--input", str(tmp_path), "--out", str(tmp_path / "o"), "--no-figures"]) == 0
    out = capsys.readouterr().out
    assert "read as sin φ: dφ/dt, phase and ω derived" in out and "warning" not in out
    probs = np.stack([pd.read_csv(tmp_path / "o" / f"rec_{k}_edges.csv", index_col=0).to_numpy() for k in range(8)])
    assert edge_auroc(probs, sim["edges"]) > 0.85


def test_infer_any_csv_of_any_n_with_the_general_model(tmp_path, capsys):
    "The general model reads one column per series (any N) and <series>.<feature> columns, in any units."
    from acd_nb.sims import SimConfig, simulate
    var = simulate(SimConfig(system="var", n_nodes=12, n_steps=80), 1, seed=5)["x"][0]
    pd.DataFrame({f"s{i}": 1e3 * var[i, :, 0] for i in range(12)}).to_csv(tmp_path / "values.csv", index=False)
    springs = simulate(SimConfig(system="springs", n_nodes=7, n_steps=60), 1, seed=5)["x"][0]
    pd.DataFrame({f"p{i}.{axis}": springs[i, :, a] for i in range(7) for a, axis in enumerate("xy")}).to_csv(
        tmp_path / "tracks.csv", index=False)
    for name, n, k in (("values", 12, 1), ("tracks", 7, 2)):
        out_dir = tmp_path / f"o_{name}"
        assert main(["infer", "--pretrained", "general", "--input", str(tmp_path / f"{name}.csv"), "--out", str(out_dir),
                     "--no-figures"]) == 0
        assert f"has {k} feature(s) per series; model 'general' reads up to 3" in capsys.readouterr().out
        probs = pd.read_csv(out_dir / f"{name}_edges.csv", index_col=0)
        assert probs.shape == (n, n) and np.isfinite(probs.to_numpy()).all() and (np.diag(probs.to_numpy()) == 0).all()


def test_general_model_reads_a_long_recording_in_windows(tmp_path, capsys):
    "Longer than the 100 steps it was trained on: read in windows of 100, and the springs graph still found."
    from acd_nb.metrics import edge_auroc
    from acd_nb.sims import SimConfig, simulate
    sim = simulate(SimConfig(system="springs", n_nodes=6, n_steps=600, edge_prob=0.4), 1, seed=3)
    pd.DataFrame({f"p{i}.{axis}": sim["x"][0, i, :, a] for i in range(6) for a, axis in enumerate("xy")}).to_csv(
        tmp_path / "long.csv", index=False)
    assert main(["infer", "--pretrained", "general", "--input", str(tmp_path / "long.csv"), "--out", str(tmp_path / "o"),
                 "--no-figures"]) == 0
    assert "trained on recordings of at most 100 time steps: the 600 steps are read in 11 windows 50 steps apart and in " \
        "5 windows of 200 steps 100 apart, their edge probabilities averaged" in \
        capsys.readouterr().out
    probs = pd.read_csv(tmp_path / "o" / "long_edges.csv", index_col=0).to_numpy()
    assert edge_auroc(probs[None], sim["edges"]) > 0.9


def test_evaluate_prints_metrics_with_ci(work, capsys):
    assert main(["evaluate", "--model", str(work / "run"), "--data", str(work / "data")]) == 0
    out = capsys.readouterr().out
    assert "AUROC" in out and "accuracy" in out and "MSE" in out and out.count("±") >= 4
    assert main(["evaluate", "--model", str(work / "run")]) == 0
    assert json.loads((work / "run" / "eval_enc.json").read_text())["n_samples"] == 8


def test_train_sim_still_works(tmp_path):
    assert main(["train", "--sim", "springs", "--preset", "ci", "--out", str(tmp_path / "run"), "--epochs", "1",
                 "--hidden", "8"]) == 0
    assert (tmp_path / "run" / "best.pt").exists()


def _bad_checkpoint(work, tmp_path, content):
    "A copy of the trained run whose best.pt is replaced by `content` (raw bytes or an object saved with torch.save)."
    run = tmp_path / "broken_run"
    shutil.copytree(work / "run", run)
    if isinstance(content, bytes): (run / "best.pt").write_bytes(content)
    else: torch.save(content, run / "best.pt")
    return run


def _file(path, content):
    "Write a DataFrame (CSV), an array (.npy / .npz under 'x') or text to `path`; return it."
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, pd.DataFrame): content.to_csv(path, index=False)
    elif path.suffix == ".npz": np.savez(path, x=content)
    elif path.suffix == ".npy": np.save(path, content)
    else: path.write_text(content)
    return path


def _stripped_dataset(w, t):
    "A copy of the dataset folder whose config.json lost its description."
    shutil.copytree(w / "data", t / "stripped")
    meta = json.loads((t / "stripped" / "config.json").read_text())
    (t / "stripped" / "config.json").write_text(json.dumps({k: v for k, v in meta.items() if k != "config"}))
    return t / "stripped"


def _infer(w, t, src):
    return ["infer", "--model", str(w / "run"), "--input", str(src), "--out", str(t / "o")]


BAD = {  # case -> (argv from the work folder and a temp folder, words the one-line error must contain)
    "missing file": (lambda w, t: _infer(w, t, t / "nope.csv"), "series file"),
    "series all missing": (lambda w, t: _infer(w, t, _file(t / "gone.csv", pd.DataFrame({"a": [1.0] * 30, "b": np.nan}))),
                           "b of"),
    "one observed step": (lambda w, t: _infer(w, t, _file(t / "lonely.csv", pd.DataFrame({"a": [1.0, 2.0] * 15,
                                                                                       "b": [3.0] + [np.nan] * 29}))),
                          "lonely.csv has 1 observed step(s): the model needs at least 2"),
    "inf": (lambda w, t: _infer(w, t, _file(t / "inf.npy", np.full((5, 30), np.inf))), "infinite values"),
    "too few steps": (lambda w, t: _infer(w, t, named_csv(w, t / "short.csv", n_steps=10)),
                      "short.csv has 10 time steps but model 'run' needs at least 20 time steps (its MLP encoder reads 20 at once"),
    "feature count": (lambda w, t: _infer(w, t, _file(t / "four.npz", np.ones((1, 5, 30, 4)))),
                      "has 4 feature(s) per series but model 'run' was trained on 1 (x)"),
    "empty csv": (lambda w, t: _infer(w, t, _file(t / "empty.csv", "")), "is empty"),
    "text column": (lambda w, t: _infer(w, t, _file(t / "text.csv", pd.DataFrame({"a": [1.0] * 30, "b": ["x"] * 30}))),
                    "['b'] are not numeric"),
    "unknown preset": (lambda w, t: ["simulate", "springs", "--out", str(t / "d"), "--preset", "gpu"], "unknown preset 'gpu'"),
    "unknown train preset": (lambda w, t: ["train", "--data", str(w / "data"), "--preset", "huge", "--out", str(t / "r")],
                             "unknown preset 'huge'"),
    "corrupt checkpoint": (lambda w, t: ["evaluate", "--model", str(_bad_checkpoint(w, t, b"\x00garbage"))],
                           "not a readable acd_nb checkpoint"),
    "foreign checkpoint": (lambda w, t: ["evaluate", "--model", str(_bad_checkpoint(w, t, {"weights": torch.zeros(3)}))],
                           "not an acd_nb checkpoint"),
    # weights_only=True refuses pickled objects, which could run code when loaded
    "pickled object": (lambda w, t: ["infer", "--model", str(_bad_checkpoint(w, t, {"model": {}, "config": argparse.Namespace(a=1)})),
                                     "--input", str(named_csv(w, t / "ok.csv")), "--out", str(t / "o")],
                       "not a readable acd_nb checkpoint"),
    "not a model folder": (lambda w, t: ["evaluate", "--model", str(w / "data")], "holds no trained model"),
    "missing model folder": (lambda w, t: ["evaluate", "--model", str(t / "none")], "no model folder"),
    "unknown pretrained": (lambda w, t: ["infer", "--pretrained", "no-such-model", "--input", str(t / "x.csv"),
                                         "--out", str(t / "o")], "unknown pretrained model 'no-such-model'"),
    "non-empty out": (lambda w, t: ["simulate", "springs", "--out", str(w / "data")], "is not empty; pass --force"),
    "bad features": (lambda w, t: ["simulate", "kuramoto", "--out", str(t / "d"), "--features", "sin"], "comma-separated integers"),
    "out is a file": (lambda w, t: _infer(w, t, named_csv(w, t / "ok.csv"))[:-1] + [str(_file(t / "taken", "x"))],
                      "exists and is not a folder"),
    "out under a file": (lambda w, t: _infer(w, t, named_csv(w, t / "ok.csv"))[:-1] + [str(_file(t / "taken", "x") / "sub")],
                         "cannot be created: "),  # refused before loading the model's input or inferring anything
    "force on a user folder": (lambda w, t: ["simulate", "springs", "--out", str(_file(t / "mine" / "thesis.txt", "x").parent),
                                             "--force"], "was not written by acd"),
    "dataset without description": (lambda w, t: ["train", "--data", str(_stripped_dataset(w, t)), "--preset", "ci",
                                                   "--out", str(t / "r")], "lacks the dataset description"),
    "ragged csv": (lambda w, t: _infer(w, t, _file(t / "ragged.csv", "a,b\n1,2\n3,4,5\n" + "1,2\n" * 30)),
                   "not a regular comma-separated table"),
    # issue 33, case 8: a broken run.json is named
    "run.json not JSON": (lambda w, t: _train_into(w, _run_json(t, "{bad")), "run.json is not valid JSON"),
    "run.json a list": (lambda w, t: _train_into(w, _run_json(t, "[1, 2]")), "run.json holds a JSON list, not the object"),
    # issue 33, case 9: messages that say what is wrong, naming the file
    "one-row csv": (lambda w, t: _kuramoto(t, _file(t / "one.csv", "a,b,c\n0.1,0.2,0.3\n")),
                    "one.csv has 1 time step but model 'kuramoto' needs at least 14 time steps"),
    "two-row csv": (lambda w, t: _kuramoto(t, _file(t / "two.csv", "a,b,c\n0.1,0.2,0.3\n0.2,0.1,0.0\n")),
                    "two.csv has 2 time steps"),
    "npz without samples": (lambda w, t: _kuramoto(t, _file(t / "zero.npz", np.zeros((0, 5, 49, 4)))),
                            "zero.npz: the array holds no samples (shape (0, 5, 49, 4)"),
    "finite beyond float32": (lambda w, t: _kuramoto(t, _file(t / "big.npy", np.full((5, 60), 1e300))),
                              "big.npy holds values up to 1e+300, beyond the float32 range"),
    "multi-sample npz named": (lambda w, t: _kuramoto(t, _file(t / "multi.npz", np.ones((2, 5, 60, 3)))),
                               "multi.npz has 3 feature(s) per series"),
    "pickle protocol 4": (lambda w, t: ["evaluate", "--model", str(_pickled(w, t))], "refuses to load because loading it could run code"),
}


def _run_json(t, text):
    "A run folder (no marker) whose run.json holds `text`."
    (t / "r").mkdir(exist_ok=True)
    (t / "r" / "run.json").write_text(text)
    return t / "r"


def _train_into(w, out):
    return ["train", "--data", str(w / "data"), "--preset", "ci", "--out", str(out), "--epochs", "1", "--hidden", "8"]


def _kuramoto(t, src):
    return ["infer", "--pretrained", "kuramoto", "--input", str(src), "--out", str(t / "o"), "--no-figures"]


def _pickled(w, t):
    "A run whose best.pt is a plain pickle (protocol 4) of a callable: refused without torch's warning or advice."
    import pickle
    run = _bad_checkpoint(w, t, b"")
    with open(run / "best.pt", "wb") as f: pickle.dump({"model": print, "config": {}}, f, protocol=4)
    return run


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_and_exit_2(case, work, tmp_path, capsys):
    make_argv, expected = BAD[case]
    argv = make_argv(work, tmp_path)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("acd: error: "), err
    assert expected in err and "Traceback" not in err and "weights_only" not in err, err


def test_console_script_exit_code_and_single_line(tmp_path):
    res = subprocess.run([str(BIN / "acd"), "infer", "--pretrained", "no-such-model", "--input", "x.csv",
                          "--out", str(tmp_path)], capture_output=True, text=True)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and res.stderr.startswith("acd: error: unknown pretrained")
    assert "shipped models: " in res.stderr or "no models are shipped" in res.stderr


def test_demo_with_a_model_folder_and_without_models(work, tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path / "demo"), "--n-samples", "16", "--n-test", "8", "--tta-steps", "2",
                 "--model", str(work / "run")]) == 0
    out = capsys.readouterr().out
    assert "Enc+TTA" in out and "paper" in out
    for name in ("samples.png", "true_vs_inferred.png", "trajectories.png", "summary.json"):
        assert (tmp_path / "demo" / name).exists()
    from acd_nb.commands import run_demo
    summary = run_demo(tmp_path / "demo0", n_samples=8, models=[])
    assert "models" not in summary and "no trained model is shipped" in capsys.readouterr().out


# ---- issue 33: outputs that never clobber, batches that survive a bad file, limits instead of tracebacks ----

def _err(capsys):
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_out_folder_with_user_files_is_refused_by_every_command(work, tmp_path, capsys):
    "Case 1: one rule for simulate, train and infer: a folder of the user's files is refused by name and left as it was."
    src = named_csv(work, tmp_path / "rec.csv")
    mine = tmp_path / "mine"; mine.mkdir()
    (mine / "summary.json").write_text("mine"); (mine / "rec_edges.csv").write_text("mine too")
    assert main(_infer(work, tmp_path, src)[:-1] + [str(mine)]) == 2
    assert "was not written by acd (it holds rec_edges.csv, summary.json and no .written-by-acd file)" in _err(capsys)[1]
    theirs = tmp_path / "theirs"; theirs.mkdir()
    (theirs / "history.json").write_text("mine"); (theirs / "best.pt").write_text("mine")
    assert main(_train_into(work, theirs)) == 2
    assert "was not written by acd (it holds best.pt, history.json" in _err(capsys)[1]
    assert main(["simulate", "springs", "--out", str(theirs), *SIZES]) == 2
    assert "was not written by acd" in _err(capsys)[1]
    assert [(mine / f).read_text() for f in ("summary.json", "rec_edges.csv")] == ["mine", "mine too"]
    assert sorted(p.name for p in theirs.iterdir()) == ["best.pt", "history.json"]
    assert main(_infer(work, tmp_path, src)[:-1] + [str(work / "data")]) == 2  # another command's folder
    assert "holds the output of `acd simulate`; choose another --out for `acd infer`" in _err(capsys)[1]


def test_infer_rerun_replaces_only_its_own_outputs(work, tmp_path, capsys):
    "Case 1: rerunning `acd infer` on its own folder replaces its earlier outputs; a user's file put there stops it."
    first, second = named_csv(work, tmp_path / "first.csv"), named_csv(work, tmp_path / "second.csv")
    out = tmp_path / "o"
    assert main(_infer(work, tmp_path, first) + ["--no-figures"]) == 0
    assert main(_infer(work, tmp_path, second) + ["--no-figures"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [".written-by-acd", "second_edges.csv", "summary.json"]
    assert [s["sample"] for s in json.loads((out / "summary.json").read_text())["samples"]] == ["second"]
    (out / "notes.txt").write_text("mine")
    assert main(_infer(work, tmp_path, first)) == 2
    assert "holds files acd did not write (notes.txt)" in _err(capsys)[1] and (out / "second_edges.csv").exists()


@pytest.mark.parametrize("command", ["infer", "train"])
def test_root_and_home_are_refused(command, work, tmp_path, monkeypatch, capsys):
    "Case 2: --out / and --out $HOME are refused before anything is read or written."
    home = tmp_path / "home"; home.mkdir(); monkeypatch.setenv("HOME", str(home))
    for out in ("/", str(home)):
        argv = _infer(work, tmp_path, named_csv(work, tmp_path / "rec.csv"))[:-1] + [out] if command == "infer" \
            else _train_into(work, out)
        assert main(argv) == 2
        err = _err(capsys)[1]
        assert err.startswith(f"acd: error: refusing --out {out}: it is the ") and err.count("\n") == 1, err
    assert list(home.iterdir()) == []


def test_a_second_writer_is_refused_and_a_killed_one_leaves_no_lock(work, tmp_path, capsys):
    "Case 3: a run holding --out (an flock) refuses a second one; killed with -9, it leaves the folder usable."
    out = tmp_path / "o"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from acd_nb.commands import claim_out_folder\n"
                               f"with claim_out_folder({str(out)!r}, 'infer', ['x_edges.csv']):\n"
                               "    print('held', flush=True); time.sleep(120)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        src = named_csv(work, tmp_path / "rec.csv")
        assert main(_infer(work, tmp_path, src)) == 2
        assert f"another acd run (process {holder.pid}) is writing to {out}; wait for it" in _err(capsys)[1]
        assert main(_train_into(work, out)) == 2  # train takes the same lock (and the folder is infer's)
    finally:
        holder.kill(); holder.wait()
    assert main(_infer(work, tmp_path, src) + ["--no-figures"]) == 0  # the kernel dropped the lock with the process
    assert (out / "rec_edges.csv").exists() and not (out / ".acd.lock").exists()


def test_out_equal_to_the_input_folder_is_refused(work, tmp_path, capsys):
    "Case 4: --out is the input folder (a rerun would read its own outputs as recordings)."
    (tmp_path / "recs").mkdir()
    named_csv(work, tmp_path / "recs" / "a.csv")
    assert main(["infer", "--model", str(work / "run"), "--input", str(tmp_path / "recs"), "--out", str(tmp_path / "recs")]) == 2
    assert "is the input folder" in _err(capsys)[1]
    assert sorted(p.name for p in (tmp_path / "recs").iterdir()) == ["a.csv"]


def test_a_bad_file_does_not_stop_the_folder(work, tmp_path, capsys):
    "Case 5: every good recording is written (each at its own length), every bad one named with its reason, exit 3."
    recs = tmp_path / "recs"; recs.mkdir()
    named_csv(work, recs / "a_ok.csv", n_steps=40)
    _file(recs / "b_garbage.csv", "a,b\n1,2\n3,4,5\n")
    pd.read_csv(named_csv(work, recs / "c_nan.csv")).assign(sun=np.nan).to_csv(recs / "c_nan.csv", index=False)
    named_csv(work, recs / "d_longer.csv", columns=NAMES[:4])  # 4 series: its own shape
    res = subprocess.run([str(BIN / "acd"), "infer", "--model", str(work / "run"), "--input", str(recs),
                          "--out", str(tmp_path / "o"), "--no-figures"], capture_output=True, text=True,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert res.returncode == 3, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 2 and all(line.startswith("acd: error: ") for line in lines), res.stderr
    assert "b_garbage.csv: not a regular comma-separated table" in lines[0] and "c_nan.csv has no observed value" in lines[1]
    assert "2 sample(s)" in res.stdout and "2 recording(s) failed" in res.stdout
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert [s["sample"] for s in summary["samples"]] == ["a_ok", "d_longer"]
    assert [s["names"] for s in summary["samples"]] == [NAMES, NAMES[:4]] and summary["names"] is None
    assert [Path(f["source"]).name for f in summary["failed"]] == ["b_garbage.csv", "c_nan.csv"]
    assert pd.read_csv(tmp_path / "o" / "d_longer_edges.csv", index_col=0).shape == (4, 4)
    assert "some recordings failed" in subprocess.run([str(BIN / "acd"), "infer", "--help"], capture_output=True,
                                                      text=True).stdout.replace("\n", " ").replace("  ", " ")


def test_memory_is_estimated_before_inference(work, tmp_path, monkeypatch, capsys):
    "Case 6: 5,000 series, or a recording too long for the limit, is refused in one line; within it, batches fit."
    rng = np.random.default_rng(0)
    wide = tmp_path / "wide.csv"
    pd.DataFrame(np.sin(rng.normal(size=(30, 5000)).cumsum(0)), columns=[f"s{k}" for k in range(5000)]).to_csv(wide, index=False)
    start = time.perf_counter()
    assert main(["infer", "--pretrained", "kuramoto", "--input", str(wide), "--out", str(tmp_path / "o")]) == 2
    err = _err(capsys)[1]
    assert time.perf_counter() - start < 30 and err.count("\n") == 1, err
    assert "wide.csv: inferring the graph of 5000 series x 30 steps (enc) needs about" in err
    assert "GB of memory, more than the limit of" in err and "use at most about" in err and "series per file" in err
    monkeypatch.setenv("ACD_MEMORY_GB", "0.05")
    long = tmp_path / "long.csv"
    pd.DataFrame(np.sin(rng.normal(size=(20_000, 5)).cumsum(0)), columns=NAMES).to_csv(long, index=False)
    assert main(["infer", "--pretrained", "kuramoto", "--input", str(long), "--out", str(tmp_path / "o")]) == 2
    err = _err(capsys)[1]
    assert "more than the limit of 0.1 GB (ACD_MEMORY_GB)" in err and "files of at most about" in err, err
    # within the limit: batches of one sample when one is all that fits, with the same graphs as one batch
    from acd_nb.commands import inference_memory
    from acd_nb.pretrained import load_model
    x = np.random.default_rng(1).normal(size=(6, 5, 20, 1)).cumsum(2)
    np.savez(tmp_path / "six.npz", x=x)
    monkeypatch.setenv("ACD_MEMORY_GB", str(1.5 * inference_memory(load_model(work / "run"), 5, 20, 1) / 2 ** 30))
    assert main(["infer", "--model", str(work / "run"), "--input", str(tmp_path / "six.npz"), "--out", str(tmp_path / "b1"), "--no-figures"]) == 0
    monkeypatch.delenv("ACD_MEMORY_GB")
    assert main(["infer", "--model", str(work / "run"), "--input", str(tmp_path / "six.npz"), "--out", str(tmp_path / "b6"), "--no-figures"]) == 0
    for k in range(6):
        np.testing.assert_allclose(pd.read_csv(tmp_path / "b1" / f"six_{k}_edges.csv", index_col=0).to_numpy(),
                                   pd.read_csv(tmp_path / "b6" / f"six_{k}_edges.csv", index_col=0).to_numpy(), atol=1e-6)


def _file_size_limit(n_bytes):
    "For a child process: writing past `n_bytes` fails (EFBIG, as a full disk would) instead of killing it."
    def limit():
        import resource, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (n_bytes, n_bytes))
    return limit


def test_train_on_a_full_disk_is_one_line_and_keeps_checkpoints(work, tmp_path):
    "Case 7: a checkpoint that cannot be written: one line naming it, exit 2, the complete checkpoints kept."
    out = tmp_path / "run"
    argv = [str(BIN / "acd"), "train", "--data", str(work / "data"), "--preset", "ci", "--out", str(out), "--hidden", "8"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    assert subprocess.run(argv + ["--epochs", "1"], env=env, capture_output=True).returncode == 0
    last = (out / "last.pt").read_bytes()
    res = subprocess.run(argv + ["--epochs", "3"], env=env, capture_output=True, text=True,
                         preexec_fn=_file_size_limit(len(last) // 2))  # best.pt fits, last.pt does not
    errors = [line for line in res.stderr.splitlines() if "acd: error" in line or "Traceback" in line]
    assert res.returncode == 2 and len(errors) == 1, res.stderr[-2000:]
    assert f"cannot write {out / 'last.pt'}: the write failed (a full disk or a file-size limit?)" in errors[0]
    assert (out / "last.pt").read_bytes() == last and not list(out.glob(".*.tmp"))
    from acd_nb.pretrained import read_checkpoint
    assert read_checkpoint(out / "best.pt")["epoch"] >= 1
    assert main(argv[1:] + ["--epochs", "2"]) == 0  # resumes


def test_temporaries_of_a_killed_run_are_removed_by_the_rerun(work, tmp_path):
    "Case 9: kill -9 mid-write leaves .<name>.<random>.tmp files; the next run on the folder removes them."
    out = tmp_path / "run"
    assert main(_train_into(work, out)) == 0
    (out / ".last.pt.abcd1234.tmp").write_bytes(b"half a checkpoint")
    assert main(_train_into(work, out)[:-4] + ["--epochs", "2", "--hidden", "8"]) == 0
    assert not list(out.glob(".*.tmp")) and json.loads((out / "history.json").read_text())[-1]["epoch"] == 2


def test_a_refused_pickle_is_one_line_without_warnings(work, tmp_path):
    "Case 9: torch's UserWarning and its advice to load with weights_only=False never reach the user."
    res = subprocess.run([str(BIN / "acd"), "evaluate", "--model", str(_pickled(work, tmp_path))], capture_output=True, text=True)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "refuses to load" in res.stderr and "weights_only" not in res.stderr


def test_unicode_file_names_stay_readable(work, tmp_path, capsys):
    "Case 10: 日本.csv gives 日本_edges.csv; a renamed sample is told among the notes."
    recs = tmp_path / "recs"; recs.mkdir()
    named_csv(work, recs / "日本.csv"); named_csv(work, recs / "my (first) run.csv")
    assert main(["infer", "--model", str(work / "run"), "--input", str(recs), "--out", str(tmp_path / "o"), "--no-figures"]) == 0
    assert "note: my (first) run.csv is written as my_first_run_edges.csv" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "o").glob("*_edges.csv")) == ["my_first_run_edges.csv", "日本_edges.csv"]
