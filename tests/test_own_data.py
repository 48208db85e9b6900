"`acd train --data` on a user's own recordings (issue 48) and how a user's files are read (issue 51, items 11-15)."
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from acd_nb.cli import main
from conftest import BIN

NAMES = [f"ch{i}" for i in range(6)]
FAST = ["--preset", "ci", "--epochs", "2", "--hidden", "8", "--window", "20"]


def acd(*argv):
    "The console script as a user runs it: exit code, stdout, stderr."
    res = subprocess.run([str(BIN / "acd"), *map(str, argv)], capture_output=True, text=True,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    return res.returncode, res.stdout, res.stderr


def write_recordings(folder: Path, n: int = 6, seed: int = 0) -> Path:
    "`n` CSV recordings of 6 coupled random walks: lengths 30 to 55, gaps (NaN), one with its columns in another order."
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(n):
        steps = 30 + 5 * k
        x = np.zeros((steps, len(NAMES)))
        for t in range(1, steps): x[t] = 0.9 * x[t - 1] + 0.3 * np.roll(x[t - 1], 1) + rng.normal(size=len(NAMES))
        table = pd.DataFrame(x, columns=NAMES)
        if k % 2: table.loc[5:9, "ch2"] = np.nan
        if k == 3: table = table[NAMES[::-1]]
        table.to_csv(folder / f"trial_{k}.csv", index=False)
    return folder


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    "A folder of CSV recordings and a run trained on it by the console script."
    root = tmp_path_factory.mktemp("own")
    recs = write_recordings(root / "recs")
    code, out, err = acd("train", "--data", recs, "--out", root / "run", *FAST)
    assert code == 0, err
    return root, out


def test_train_on_a_folder_of_csv_files(trained):
    root, out = trained
    assert "trained on 5 recording(s)" in out and "validated on 1 held out" in out and "validation NLL" in out
    run = json.loads((root / "run" / "run.json").read_text())
    assert run["data"]["series"] == NAMES and run["data"]["kind"] == "recordings"
    assert len(run["data"]["files"]) == 5 and len(run["data"]["valid_files"]) == 1
    assert run["data"]["lengths"] == [30, 35, 40, 45, 50, 55] and run["data"]["missing_fraction"] > 0
    assert run["model"]["mask_input"] and "lowest validation loss" in run["selection"]
    history = json.loads((root / "run" / "history.json").read_text())
    assert [h["epoch"] for h in history] == [1, 2] and all("valid_nll" in h and "valid_auroc" not in h for h in history)
    card = (root / "run" / "card.md").read_text()
    assert "held out for validation" in card and "ch0, ch1" in card and "missing" in card
    assert sorted(p.name for p in (root / "run").iterdir()) == [
        ".written-by-acd", "best.pt", "card.md", "history.json", "last.pt", "run.json"]


def test_the_run_is_a_model_for_infer_and_load_model(trained, tmp_path):
    from acd_nb.pretrained import load_model
    root, _ = trained
    loaded = load_model(root / "run")
    assert loaded.info["kind"] == "run" and loaded.infer_steps == 20 and loaded.n_features == 1
    new = write_recordings(tmp_path / "new", n=2, seed=5)
    code, out, err = acd("infer", "--model", root / "run", "--input", new, "--out", tmp_path / "g", "--no-figures",
                         "--method", "enc+tta", "--tta-steps", "2")
    assert code == 0, err
    assert "2 sample(s)" in out
    table = pd.read_csv(tmp_path / "g" / "trial_1_edges.csv", index_col=0)
    assert list(table.index) == NAMES and table.shape == (6, 6)
    # a recording with its columns in another order reads as the others: matched by name
    assert list(pd.read_csv(tmp_path / "g" / "trial_0_edges.csv", index_col=0).columns) == NAMES


def test_rerun_resumes_and_a_longer_budget_continues(trained):
    root, _ = trained
    code, out, err = acd("train", "--data", root / "recs", "--out", root / "run", *FAST)
    assert code == 0, err
    assert "2 epochs" in out  # finished: found, not trained again
    code, out, err = acd("train", "--data", root / "recs", "--out", root / "run", *FAST[:2], "--epochs", "3",
                         *FAST[4:])
    assert code == 0, err
    assert len(json.loads((root / "run" / "history.json").read_text())) == 3


def test_a_list_of_files_and_the_python_api(tmp_path):
    from acd_nb.train import train_recordings
    recs = write_recordings(tmp_path / "recs", n=4)
    files = sorted(recs.iterdir())
    assert main(["train", "--data", *map(str, files), "--out", str(tmp_path / "run"), *FAST, "--hold-out", "2"]) == 0
    assert len(json.loads((tmp_path / "run" / "run.json").read_text())["data"]["valid_files"]) == 2
    frames = [pd.read_csv(f) for f in files]  # DataFrames work the same, without a run folder
    res = train_recordings(frames, None, "ci", window=20, model={"hidden": 8}, train={"epochs": 1, "progress": False})
    assert res["data"].train.shape[1:] == (6, 20, 1) and len(res["history"]) == 1


def test_one_long_recording_validates_on_time(tmp_path):
    recs = write_recordings(tmp_path / "one", n=1)
    long = pd.concat([pd.read_csv(recs / "trial_0.csv")] * 4, ignore_index=True)
    long.to_csv(recs / "trial_0.csv", index=False)
    code, _, err = acd("train", "--data", recs, "--out", tmp_path / "r", *FAST)
    assert code == 2 and err.count("\n") == 1
    assert "1 recording given: validating on recordings held out needs at least 2" in err and "--hold-out time" in err
    code, out, err = acd("train", "--data", recs, "--out", tmp_path / "r", *FAST, "--hold-out", "time")
    assert code == 0, err
    assert "validated on 1 held out" in out


def test_init_from_a_run(trained, tmp_path):
    root, _ = trained
    assert main(["train", "--data", str(root / "recs"), "--out", str(tmp_path / "warm"), "--preset", "ci",
                 "--epochs", "1", "--init", str(root / "run")]) == 0
    run = json.loads((tmp_path / "warm" / "run.json").read_text())
    assert run["init"].startswith(str(root / "run")) and run["model"]["hidden"] == 8


def test_adapt_by_simulation_from_the_console(trained, tmp_path):
    "`acd train --simulate`: the general model's encoder trained on simulations shaped like the recordings, not on them"
    root, _ = trained
    code, out, err = acd("train", "--data", root / "recs", "--simulate", "var", "--epochs", "1", "--out", tmp_path / "sim")
    assert code == 0, err
    assert "adapted pretrained:general by simulation: var shaped like the recordings (6 series, 30 to 55 steps)" in out
    run = json.loads((tmp_path / "sim" / "run.json").read_text())
    assert (run["data"]["features"], run["train"]["elbo"], run["data"]["mixture"]["n_nodes"]) == (1, False, [6, 6])
    code, out, err = acd("infer", "--model", tmp_path / "sim", "--input", root / "recs", "--out", tmp_path / "inf")
    assert code == 0, err
    for argv, words in ((["--simulate", "springz"], "systems must be a non-empty subset of"),
                        (["--simulate", "var", "--init", "pretrained:springs"], "trained on a simulated mixture")):
        code, _, err = acd("train", "--data", root / "recs", *argv, "--out", tmp_path / "refused")
        assert code == 2 and err.count("\n") == 1 and words in err, err


def test_self_training_from_the_console(trained, tmp_path):
    "`acd train --self-train`: the general model's encoder trained on windows of the recordings against its own reading"
    root, _ = trained
    code, out, err = acd("train", "--data", root / "recs", "--self-train", "--epochs", "1", "--out", tmp_path / "self")
    assert code == 0, err
    # windows of half the shortest recording (30 steps): 15, cut 7 apart from recordings of 30 to 55 steps
    assert "adapted pretrained:general by self-training on 6 recording(s) (" in out and "windows of 15 steps" in out, out
    run = json.loads((tmp_path / "self" / "run.json").read_text())
    assert (run["train"]["soft_edges"], run["train"]["elbo"], run["data"]["valid_files"]) == (True, False, [])
    code, out, err = acd("infer", "--model", tmp_path / "self", "--input", root / "recs", "--out", tmp_path / "inf")
    assert code == 0, err


def _dataset_folder(t):
    "Looks like a dataset folder of `acd simulate` (refused before anything is read)"
    (t / "ds").mkdir()
    (t / "ds" / "config.json").write_text("{}")
    return t / "ds"


def _mismatched(t):
    "A folder of recordings in which one file names a series differently."
    recs = write_recordings(t / "mixed", n=4)
    pd.read_csv(recs / "trial_2.csv").rename(columns={"ch5": "ch9"}).to_csv(recs / "trial_2.csv", index=False)
    return recs


def _short(t):
    recs = write_recordings(t / "short", n=3)
    pd.read_csv(recs / "trial_0.csv").head(12).to_csv(recs / "trial_0.csv", index=False)
    return recs


def _blank_series(t):
    recs = write_recordings(t / "blank", n=3)
    pd.read_csv(recs / "trial_1.csv").assign(ch4=np.nan).to_csv(recs / "trial_1.csv", index=False)
    return recs


def _two_features(t):
    recs = t / "xy"; recs.mkdir()
    for k in range(3):
        pd.DataFrame({f"{s}.{f}": np.random.default_rng(k).normal(size=30) for s in ("a", "b") for f in "xy"}
                     ).to_csv(recs / f"r{k}.csv", index=False)
    return recs


RING = np.roll(np.eye(len(NAMES)), 1, axis=1)  # write_recordings' coupling: ch(i) drives ch(i+1), rows cause


def write_graphs(folder: Path, recs: Path) -> Path:
    "The known graph of each recording of `recs`, named like it; trial_3's rows and columns in another order."
    folder.mkdir(parents=True, exist_ok=True)
    for rec in sorted(recs.glob("*.csv")):
        table = pd.DataFrame(RING.astype(int), index=NAMES, columns=NAMES)
        if rec.stem == "trial_3": table = table.loc[NAMES[::-1], NAMES[2:] + NAMES[:2]]
        table.to_csv(folder / rec.name)
    return folder


def _bad_graph(t):
    recs = write_recordings(t / "g", n=4)
    graphs = write_graphs(t / "graphs", recs)
    pd.read_csv(graphs / "trial_1.csv", index_col=0).rename(columns={"ch5": "ch7"}).to_csv(graphs / "trial_1.csv")
    return ["--data", recs, "--graphs", graphs]


def _missing_graph(t):
    recs = write_recordings(t / "g", n=4)
    graphs = write_graphs(t / "graphs", recs)
    (graphs / "trial_2.csv").unlink()
    return ["--data", recs, "--graphs", graphs]


BAD = {  # case -> (argv after `acd train`, words of the one-line error)
    "series names differ": (lambda t, run: ["--data", _mismatched(t)],
                            "series names differ: trial_2.csv has ch0, ch1, ch2, ch3, ch4, ch9 but trial_0.csv has"),
    "shorter than the window": (lambda t, run: ["--data", _short(t)],
                                "1 recording(s) are shorter than the model's window of 20 steps"),
    "a series with no observed value": (lambda t, run: ["--data", _blank_series(t)], "ch4 of"),
    "features against --init": (lambda t, run: ["--data", _two_features(t), "--init", run],
                                "the recordings have 2 feature(s) per series but --init model 'run' reads 1"),
    "too few recordings": (lambda t, run: ["--data", write_recordings(t / "two", n=2), "--hold-out", "2"],
                           "leave at least 1 to train on"),
    "bad hold-out": (lambda t, run: ["--data", write_recordings(t / "ho", n=3), "--hold-out", "half"],
                     "--hold-out must be a share"),
    "a graph names other series": (lambda t, run: _bad_graph(t), "trial_1.csv: its columns are ch0, ch1, ch2, ch3, ch4, "
                                   "ch7 but the recordings' series are ch0, ch1, ch2, ch3, ch4, ch5 (lacks ch5; has ch7)"),
    "a recording without its graph": (lambda t, run: _missing_graph(t),
                                      "holds no graph for 1 of the 4 recording(s): trial_2.csv; give one CSV per recording"),
    "--simulate with --window": (lambda t, run: ["--data", write_recordings(t / "w", n=3), "--simulate", "var"],
                                 "--preset, --window apply to training on the recordings themselves (not with --simulate)"),
    "--self-train with --simulate": (lambda t, run: ["--data", write_recordings(t / "a", n=3), "--simulate", "var",
                                                     "--self-train"], "--simulate and --self-train are two ways to adapt"),
    "--self-train with --hold-out": (lambda t, run: ["--data", write_recordings(t / "h", n=3), "--self-train",
                                                     "--hold-out", "1"],
                                     "--preset, --hold-out apply to training on the recordings with the ELBO (not with "
                                     "--self-train)"),
    "--select auroc without graphs": (lambda t, run: ["--data", write_recordings(t / "s", n=3), "--select", "auroc"],
                                      "pass them with graphs= (--graphs)"),
    "--graphs on a dataset folder": (lambda t, run: ["--data", _dataset_folder(t), "--graphs", t / "g.csv"],
                                     "--graphs apply to a user's recordings, not to the dataset folder"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_recordings_are_one_line_naming_the_file(case, trained, tmp_path, capsys):
    root, _ = trained
    make, expected = BAD[case]
    argv = ["train", *map(str, make(tmp_path, root / "run")), "--out", str(tmp_path / "r"), *FAST]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("acd: error: ") and expected in err, err
    assert not (tmp_path / "r").exists()  # nothing written


def test_bad_csv_in_the_folder_through_the_console_script(tmp_path):
    recs = _mismatched(tmp_path)
    code, out, err = acd("train", "--data", recs, "--out", tmp_path / "r", *FAST)
    assert code == 2 and err.count("\n") == 1 and "trial_2.csv" in err and "ch9" in err, err


# issue 51, items 11-15: how a user's files are read, each with one line naming the file and the problem

def _infer_err(run, src, out, capsys):
    capsys.readouterr()
    code = main(["infer", "--model", str(run), "--input", str(src), "--out", str(out), "--no-figures"])
    return code, capsys.readouterr().err


def test_a_csv_without_header_is_told(trained, tmp_path, capsys):
    root, _ = trained
    src = tmp_path / "headless.csv"
    pd.read_csv(root / "recs" / "trial_0.csv").to_csv(src, index=False, header=False)
    code, err = _infer_err(root / "run", src, tmp_path / "o", capsys)
    assert code == 2 and "headless.csv: the first row (" in err and "is the header missing?" in err, err


def test_gap_messages_name_the_series_and_feature(trained, tmp_path, capsys):
    root, _ = trained
    lonely = pd.read_csv(root / "recs" / "trial_0.csv")
    lonely["ch3"] = [1.0] + [np.nan] * (len(lonely) - 1)
    lonely.to_csv(tmp_path / "miss99.csv", index=False)
    code, err = _infer_err(root / "run", tmp_path / "miss99.csv", tmp_path / "o", capsys)
    assert code == 2 and "ch3 of" in err and "miss99.csv has 1 observed step(s)" in err and "series 3" not in err, err
    xy = pd.DataFrame({f"p{i}.{f}": np.arange(30.0) * (i + 1) for i in range(4) for f in "xy"})
    xy["p3.x"] = np.nan
    xy.to_csv(tmp_path / "half.csv", index=False)
    code, err = _infer_err(root / "run", tmp_path / "half.csv", tmp_path / "o", capsys)
    assert code == 2 and "p3.x of" in err and "has no observed value" in err, err


def test_random_bytes_are_refused_without_numpy_advice(trained, tmp_path, capsys):
    root, _ = trained
    noise = np.random.default_rng(0).bytes(5000)
    for name in ("noise.npy", "noise.npz"):
        (tmp_path / name).write_bytes(noise)
        code, err = _infer_err(root / "run", tmp_path / name, tmp_path / "o", capsys)
        assert code == 2 and f"{name}: cannot load its array" in err and "allow_pickle" not in err, err
    (tmp_path / "binary.csv").write_bytes(noise)
    code, err = _infer_err(root / "run", tmp_path / "binary.csv", tmp_path / "o", capsys)
    assert code == 2 and "binary.csv: not a text CSV file" in err and "one value per column" not in err, err


def test_unusable_folder_entries_are_each_named(trained, tmp_path):
    root, _ = trained
    recs = tmp_path / "recs"; recs.mkdir()
    pd.read_csv(root / "recs" / "trial_0.csv").to_csv(recs / "a_good.csv", index=False)
    os.symlink(recs / "b_loop2.csv", recs / "b_loop1.csv"); os.symlink(recs / "b_loop1.csv", recs / "b_loop2.csv")
    os.symlink(recs / "gone.csv", recs / "c_dangling.csv")
    os.mkfifo(recs / "d_fifo.csv")
    os.symlink("/dev/zero", recs / "e_zero.npy")
    code, out, err = acd("infer", "--model", root / "run", "--input", recs, "--out", tmp_path / "o", "--no-figures")
    assert code == 3, err
    lines = err.splitlines()
    assert len(lines) == 5, err
    for name, what in (("b_loop1.csv", "a link that loops"), ("b_loop2.csv", "a link that loops"),
                       ("c_dangling.csv", "a dangling link"), ("d_fifo.csv", "a named pipe (fifo)"),
                       ("e_zero.npy", "a character device (a link to /dev/zero)")):
        assert any(name in line and what in line for line in lines), (name, err)
    assert "1 sample(s)" in out


def test_a_fifo_and_dev_zero_given_directly_are_not_empty(trained, tmp_path, capsys):
    root, _ = trained
    os.mkfifo(tmp_path / "pipe.csv")
    code, err = _infer_err(root / "run", tmp_path / "pipe.csv", tmp_path / "o", capsys)
    assert code == 2 and "pipe.csv is a named pipe (fifo)" in err and "empty" not in err, err
    code, err = _infer_err(root / "run", "/dev/zero", tmp_path / "o", capsys)
    assert code == 2 and "/dev/zero is a character device" in err and "empty" not in err, err


def test_a_time_column_beside_series_features_is_told(trained, tmp_path, capsys):
    root, _ = trained
    table = pd.DataFrame({f"p{i}.{f}": np.arange(30.0) * (i + 1) for i in range(3) for f in "xy"})
    table.insert(0, "time", np.arange(30) * 0.1)
    table.to_csv(tmp_path / "clock.csv", index=False)
    code, err = _infer_err(root / "run", tmp_path / "clock.csv", tmp_path / "o", capsys)
    assert code == 2 and "column 'time' beside the <series>.<feature> columns looks like the time" in err, err
    assert "--time-column time" in err and "name the columns <series>.<feature>" not in err, err


def test_one_graph_for_a_collection_with_shared(trained, tmp_path, capsys):
    "--shared: the decoder and one q(z) fitted to every recording (the Netsim protocol), one matrix for all."
    root, _ = trained
    assert main(["infer", "--model", str(root / "run"), "--input", str(root / "recs"), "--out", str(tmp_path / "one"),
                 "--shared", "--tta-steps", "2"]) == 0
    assert "one graph for 6 recording(s)" in capsys.readouterr().out
    table = pd.read_csv(tmp_path / "one" / "collection_edges.csv", index_col=0)
    assert list(table.index) == NAMES and np.allclose(np.diag(table.to_numpy()), 0)
    assert json.loads((tmp_path / "one" / "summary.json").read_text())["method"] == "shared"


def test_one_graph_from_the_encoder_with_shared_method_enc(trained, tmp_path, capsys):
    "--shared --method enc: nothing fitted, the mean of what `acd infer` reads from each recording; fit options refused."
    root, _ = trained
    model, recs = str(root / "run"), str(root / "recs")
    assert main(["infer", "--model", model, "--input", recs, "--out", str(tmp_path / "mean"), "--shared", "--method", "enc"]) == 0
    assert "one graph for 6 recording(s) (the encoder's edge probabilities of 6 recording(s) averaged)" in capsys.readouterr().out
    assert main(["infer", "--model", model, "--input", recs, "--out", str(tmp_path / "each"), "--no-figures"]) == 0
    each = [pd.read_csv(s["edges_csv"], index_col=0).loc[NAMES, NAMES].to_numpy()  # trial_3's columns come reversed
            for s in json.loads((tmp_path / "each" / "summary.json").read_text())["samples"]]
    mean = pd.read_csv(tmp_path / "mean" / "collection_edges.csv", index_col=0)
    assert list(mean.index) == NAMES and np.allclose(mean.to_numpy(), np.mean(each, 0), atol=1e-6)
    assert json.loads((tmp_path / "mean" / "summary.json").read_text())["method"] == "encoder_mean"
    capsys.readouterr()
    for extra, told in ((["--method", "enc", "--joint-steps", "3", "--tta-lr", "0.1"],
                         "--joint-steps, --tta-lr apply to --shared with --method tta (the fitted graph)"),
                        (["--method", "enc+tta"], "--shared reads one graph with --method tta")):
        assert main(["infer", "--model", model, "--input", recs, "--out", str(tmp_path / "bad"), "--shared", *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and told in err, err


def test_known_graphs_score_every_epoch_and_the_loss_still_chooses(tmp_path):
    "--graphs: validation AUROC per epoch in history.json beside the NLL; the kept epoch is the lowest loss's."
    recs = write_recordings(tmp_path / "recs")
    graphs = write_graphs(tmp_path / "graphs", recs)
    code, out, err = acd("train", "--data", recs, "--graphs", graphs, "--out", tmp_path / "run", *FAST[:2],
                         "--epochs", "3", *FAST[4:])
    assert code == 0, err
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    assert [h["epoch"] for h in history] == [1, 2, 3]
    assert all(0 <= h["valid_auroc"] <= 1 and "valid_nll" in h for h in history)
    kept = min(history, key=lambda h: h["valid_loss"])
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["train"]["select"] == "loss" and "lowest validation loss" in run["selection"]
    assert run["data"]["graphs"] == str(graphs)
    assert f"kept epoch {kept['epoch']} (validation NLL" in out and f"AUROC {kept['valid_auroc']:.3f} against --graphs" in out
    assert "Known graphs" in (tmp_path / "run" / "card.md").read_text()


def test_select_auroc_chooses_by_the_known_graphs(tmp_path, capsys):
    "--select auroc, asked for: the epoch with the highest validation AUROC is kept; one CSV for all recordings."
    recs = write_recordings(tmp_path / "recs")
    write_graphs(tmp_path / "graphs", recs)
    one = tmp_path / "graphs" / "trial_0.csv"
    argv = ["train", "--data", str(recs), "--graphs", str(one), "--select", "auroc", "--out", str(tmp_path / "run"),
            *FAST[:2], "--epochs", "3", *FAST[4:]]
    assert main(argv) == 0
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    best = max(history, key=lambda h: h["valid_auroc"])
    import torch
    assert torch.load(tmp_path / "run" / "best.pt", weights_only=True)["epoch"] == best["epoch"]
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["train"]["select"] == "auroc" and "highest validation AUROC" in run["selection"]
    assert f"kept epoch {best['epoch']}" in capsys.readouterr().out


def test_evaluate_a_run_on_recordings_says_what_to_pass(trained, capsys):
    root, _ = trained
    capsys.readouterr()
    assert main(["evaluate", "--model", str(root / "run")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "was trained on recordings without labels" in err, err
    assert "pass --data DIR (a dataset folder of `acd simulate` with 6 series)" in err and "acd infer --model" in err


def test_shared_joint_steps_is_an_option(trained, tmp_path, capsys):
    root, _ = trained
    assert main(["infer", "--model", str(root / "run"), "--input", str(root / "recs"), "--out", str(tmp_path / "one"),
                 "--shared", "--joint-steps", "3", "--tta-steps", "2"]) == 0
    summary = json.loads((tmp_path / "one" / "summary.json").read_text())
    assert (summary["joint_steps"], summary["tta_steps"]) == (3, 2)
    capsys.readouterr()
    assert main(["infer", "--model", str(root / "run"), "--input", str(root / "recs"), "--out", str(tmp_path / "two"),
                 "--joint-steps", "3"]) == 2
    assert "--joint-steps applies to --shared" in capsys.readouterr().err
