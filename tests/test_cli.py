"The `acd` command as a user runs it: simulate -> train -> infer / evaluate, and one-line errors (exit 2) for bad input."
import argparse
import json
import warnings
import os
import shutil
import subprocess
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
    assert "note: model 'run' (MLP encoder) reads exactly 20 time steps: using the first 20 of 40" in out
    assert "my_recording:" in out and "edge(s) with p > 0.5" in out
    table = pd.read_csv(tmp_path / "out" / "my_recording_edges.csv", index_col=0)
    assert list(table.index) == NAMES and list(table.columns) == NAMES and table.index.name == "cause \\ effect"
    assert np.allclose(np.diag(table.to_numpy()), 0) and ((table.to_numpy() >= 0) & (table.to_numpy() <= 1)).all()
    assert (tmp_path / "out" / "my_recording_graph.png").stat().st_size > 20_000
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["names"] == NAMES and summary["method"] == "enc+tta" and summary["n_steps_used"] == 20


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
    assert sorted(p.name for p in (tmp_path / "o1").iterdir()) == ["summary.json", "wide_edges.csv"]
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
    "nan": (lambda w, t: _infer(w, t, _file(t / "nan.csv", pd.DataFrame({"a": [1.0, np.nan] * 15, "b": 1.0}))), "NaN"),
    "inf": (lambda w, t: _infer(w, t, _file(t / "inf.npy", np.full((5, 30), np.inf))), "NaN or infinite"),
    "too few steps": (lambda w, t: _infer(w, t, named_csv(w, t / "short.csv", n_steps=10)),
                      "short.csv has 10 time steps but model 'run' needs at least 20 time steps (its MLP encoder reads exactly 20"),
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
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_and_exit_2(case, work, tmp_path, capsys):
    make_argv, expected = BAD[case]
    argv = make_argv(work, tmp_path)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("acd: error: "), err
    assert expected in err and "Traceback" not in err, err


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
