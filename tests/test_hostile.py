"""Issue 51, a hostile user's probe: each case builds its own bad input and checks the exact behaviour (exit code, the
one line naming the file and the problem, files untouched). The tiny dataset and run are test_cli's."""
import errno
import json
import os
import shutil

import numpy as np
import pandas as pd
import pytest

from acd_nb.cli import MAX_TTA_STEPS, _parser, main
from test_cli import SIZES, _infer, _train_into, named_csv, work  # noqa: F401 (work: the module's fixture)


def _err(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("acd: error: ") and "Traceback" not in err, err
    return err.strip()


def _tree(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_hidden_files_like_temporaries_are_the_users(work, tmp_path, capsys):
    "Case 1: only temporaries of files acd listed are removed; `.notes.20240101.old` and a folder like it refuse --out."
    src, out = named_csv(work, tmp_path / "rec.csv"), tmp_path / "o"
    assert main(_infer(work, tmp_path, src) + ["--no-figures"]) == 0
    (out / ".notes.20240101.old").write_text("b")
    (out / ".mydir.20240101.old").mkdir(); (out / ".mydir.20240101.old" / "data.txt").write_text("precious")
    before = _tree(out)
    assert main(_infer(work, tmp_path, src) + ["--no-figures"]) == 2
    assert _err(capsys) == (f"acd: error: {out} holds files acd did not write (.mydir.20240101.old/data.txt, "
                            ".notes.20240101.old): acd would mix its outputs with them; move them or choose another --out")
    assert _tree(out) == before and (out / ".mydir.20240101.old" / "data.txt").read_text() == "precious"
    shutil.rmtree(out / ".mydir.20240101.old"); (out / ".notes.20240101.old").unlink()
    (out / ".rec_edges.csv.abcd1234.tmp").write_text("half")  # a killed run's temporary of a file acd listed
    assert main(_infer(work, tmp_path, src) + ["--no-figures"]) == 0
    assert not (out / ".rec_edges.csv.abcd1234.tmp").exists()


def test_a_refused_run_folder_gets_no_marker(work, tmp_path, capsys):
    "Case 2: a user's run.json refused by `acd train` is left alone, with no .written-by-acd claiming it."
    (tmp_path / "u").mkdir(); (tmp_path / "u" / "run.json").write_text('{"my": "config"}')
    assert main(_train_into(work, tmp_path / "u")) == 2
    assert "u holds a run with a different" in _err(capsys)
    assert _tree(tmp_path / "u") == ["run.json"] and (tmp_path / "u" / "run.json").read_text() == '{"my": "config"}'


def test_a_full_disk_names_the_file_and_leaves_no_partial_outputs(work, tmp_path, monkeypatch, capsys):
    "Case 3: the write that fails is named (a failed write() names no file), and the outputs written before it go."
    recs = tmp_path / "recs"; recs.mkdir()
    for name in ("a", "b", "c"): named_csv(work, recs / f"{name}.csv")
    to_csv, calls = pd.DataFrame.to_csv, []
    def full_after_one(self, path, *args, **kwargs):
        calls.append(path)
        if len(calls) > 1: raise OSError(errno.ENOSPC, "No space left on device")
        return to_csv(self, path, *args, **kwargs)
    monkeypatch.setattr(pd.DataFrame, "to_csv", full_after_one)
    out = tmp_path / "o"
    assert main(["infer", "--model", str(work / "run"), "--input", str(recs), "--out", str(out), "--no-figures"]) == 2
    assert _err(capsys) == f"acd: error: cannot write {out / 'b_edges.csv'}: no space left on the device; free some space and rerun"
    assert not out.exists()  # a_edges.csv, the marker and the lock went with the folder acd created


def test_a_full_disk_at_the_lock_leaves_no_folder(work, tmp_path, monkeypatch, capsys):
    "Case 3: on a 100 % full disk not even the lock file's process id fits: named, and no folder (nor lock) is left."
    write = os.write
    def full_for_the_lock(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".acd.lock"): raise OSError(errno.ENOSPC, "No space left on device")
        return write(fd, data)
    monkeypatch.setattr(os, "write", full_for_the_lock)
    out = tmp_path / "o"
    assert main(_infer(work, tmp_path, named_csv(work, tmp_path / "rec.csv"))) == 2
    assert _err(capsys) == f"acd: error: cannot write {out / '.acd.lock'}: no space left on the device; free some space and rerun"
    assert not out.exists()


def test_a_dataset_config_that_is_not_an_object(work, tmp_path, capsys):
    "Case 4: config.json holding [1,2] is named by train and evaluate."
    shutil.copytree(work / "data", tmp_path / "ds")
    (tmp_path / "ds" / "config.json").write_text("[1,2]")
    said = (f"acd: error: {tmp_path / 'ds' / 'config.json'} holds a JSON list, not the object `acd simulate` writes: "
            "write dataset folders with `acd simulate`")
    assert main(["train", "--data", str(tmp_path / "ds"), "--preset", "ci", "--out", str(tmp_path / "r")]) == 2
    assert _err(capsys) == said and not (tmp_path / "r").exists()
    assert main(["evaluate", "--model", str(work / "run"), "--data", str(tmp_path / "ds")]) == 2
    assert _err(capsys) == said


def test_symbolic_link_loops_and_dangling_links(work, tmp_path, capsys):
    "Case 5: a loop as --out or --input, a dangling link as --out: one line each, nothing created."
    (tmp_path / "lo1").symlink_to("lo2"); (tmp_path / "lo2").symlink_to("lo1"); (tmp_path / "dang").symlink_to("nowhere")
    src = named_csv(work, tmp_path / "rec.csv")
    assert main(_infer(work, tmp_path, src)[:-1] + [str(tmp_path / "lo1")]) == 2
    assert _err(capsys) == (f"acd: error: --out {tmp_path / 'lo1'} is a symbolic link to 'lo2' that leads to no folder "
                            "(its target is missing, or the links loop); point it at a folder or choose another --out")
    assert main(_train_into(work, tmp_path / "lo1" / "sub")) == 2
    assert _err(capsys) == f"acd: error: --out {tmp_path / 'lo1' / 'sub'} leads into a loop of symbolic links; give a real path"
    assert main(_infer(work, tmp_path, tmp_path / "lo1")) == 2
    assert _err(capsys) == f"acd: error: --input {tmp_path / 'lo1'} leads into a loop of symbolic links; give a real path"
    assert main(_infer(work, tmp_path, src)[:-1] + [str(tmp_path / "dang")]) == 2
    assert "--out " + str(tmp_path / "dang") + " is a symbolic link to 'nowhere' that leads to no folder" in _err(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dang", "lo1", "lo2", "rec.csv"]


def test_ctrl_c_is_one_line_and_exit_130(work, tmp_path, monkeypatch, capsys):
    "Case 6: Ctrl-C during TTA: one line, exit 130, the new folder gone."
    import acd_nb.infer
    def interrupted(*args, **kwargs): raise KeyboardInterrupt
    monkeypatch.setattr(acd_nb.infer, "tta", interrupted)
    argv = _infer(work, tmp_path, named_csv(work, tmp_path / "rec.csv")) + ["--method", "enc+tta", "--tta-steps", "2"]
    assert main(argv) == 130
    assert capsys.readouterr().err == "acd: interrupted; infer stopped\n" and not (tmp_path / "o").exists()


def _refused(argv, capsys) -> str:
    "The error line argparse prints for a bad option value (after the usage), with exit 2"
    with pytest.raises(SystemExit) as exit_: main(argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err.splitlines()[-1]


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1", "1e400"])
def test_tta_learning_rate_is_finite_and_positive(work, tmp_path, value, capsys):
    "Case 8: inf gave NaN probabilities, 0 the random starting graph."
    argv = _infer(work, tmp_path, tmp_path / "rec.csv") + ["--method", "enc+tta", "--tta-lr", value]
    assert _refused(argv, capsys) == f"acd infer: error: argument --tta-lr: must be a finite number above 0, got '{value}'"


def test_every_float_option_is_checked():
    "Case 8: no option is a bare float (which takes inf and nan); the checks' bounds"
    sub = next(a for a in _parser()._actions if a.dest == "command")
    floats = {(name, a.dest) for name, p in sub.choices.items() for a in p._actions if a.type is float}
    assert floats == set()
    from acd_nb.cli import _number
    assert _number(0)("0") == 0 and _number(0, 1)("1") == 1 and _number(1, kind=int)("3") == 3
    for check, text in ((_number(0), "-1e-9"), (_number(0, above=True), "0"), (_number(0, 1), "1.5"), (_number(1, kind=int), "2.5")):
        with pytest.raises(Exception, match="must be"): check(text)


def test_tta_steps_are_bounded(work, tmp_path, capsys):
    "Case 7: a billion steps ran silently; now refused at once (on a terminal, long TTA shows a progress bar)."
    argv = _infer(work, tmp_path, tmp_path / "rec.csv") + ["--method", "tta", "--tta-steps", "1000000000"]
    assert _refused(argv, capsys) == (f"acd infer: error: argument --tta-steps: must be an integer at least 1 and at most "
                                      f"{MAX_TTA_STEPS}, got '1000000000'")


@pytest.mark.parametrize("value", ["0", "-1"])
def test_evaluate_needs_a_sample(work, value, capsys):
    "Case 9: 0 gave a numpy error, -1 scored all but one sample."
    assert _refused(["evaluate", "--model", str(work / "run"), "--n-samples", value], capsys) == \
        f"acd evaluate: error: argument --n-samples: must be an integer at least 1, got '{value}'"


@pytest.mark.parametrize("value", ["inf", "1e400", "-1", "nan", "0"])
def test_memory_limit_is_a_positive_number(work, tmp_path, value, monkeypatch, capsys):
    "Case 10: inf and 1e400 made batch sizes NaN, -1 and nan were taken as limits."
    monkeypatch.setenv("ACD_MEMORY_GB", value)
    assert main(_infer(work, tmp_path, named_csv(work, tmp_path / "rec.csv"))) == 2
    assert _err(capsys) == f"acd: error: ACD_MEMORY_GB must be a positive, finite number of gigabytes, got '{value}'"
    assert not (tmp_path / "o").exists()


def test_series_never_observed_are_refused_before_training(work, tmp_path, capsys):
    "Case 16: 99.9 % missing: refused by simulate (and by train on such a folder), not by evaluate after training."
    assert main(["simulate", "springs", "--out", str(tmp_path / "d"), *SIZES, "--missing-rate", "0.999"]) == 2
    err = _err(capsys)
    assert err.startswith("acd: error: --missing-rate 0.999 (values): no sample of the train split has a value of every "
                          "series (") and err.endswith(
        " of its 320 series have none); acd can neither train on it nor evaluate it: use a lower --missing-rate, or "
        "longer series") and not (tmp_path / "d").exists()
    shutil.copytree(work / "data", tmp_path / "ds")
    with np.load(tmp_path / "ds" / "valid.npz") as z: valid = dict(z)
    valid["x"][:, 2] = np.nan  # series 2 never observed in any validation sample
    np.savez(tmp_path / "ds" / "valid.npz", **valid)
    assert main(["train", "--data", str(tmp_path / "ds"), "--preset", "ci", "--out", str(tmp_path / "r")]) == 2
    assert _err(capsys) == (f"acd: error: dataset folder {tmp_path / 'ds'}: no sample of the valid split has a value of "
                            "every series (16 of its 80 series have none); acd can neither train on it nor evaluate it: "
                            "simulate it again with a lower --missing-rate")
    assert not (tmp_path / "r").exists()


def test_evaluate_scores_what_exists(work, tmp_path, capsys):
    "Case 16: test samples with a series observed too little to be read or scored are left out, and counted."
    shutil.copytree(work / "data", tmp_path / "ds")
    with np.load(tmp_path / "ds" / "test.npz") as z: test = dict(z)
    test["x"][0, 1] = np.nan  # no value at all
    test["x"][5, 3, 20:] = np.nan  # none after the 20 steps the graph is read from
    test["x"][6, 0, 1:20] = np.nan  # one in them: a model needs two to see the series change
    np.savez(tmp_path / "ds" / "test.npz", **test)
    assert main(["evaluate", "--model", str(work / "run"), "--data", str(tmp_path / "ds")]) == 0
    out = capsys.readouterr().out
    assert f"5 samples, test split of {tmp_path / 'ds'} (3 left out: a series with too few observed values):" in out
    assert "mean over 5 samples" in out
    test["x"][:, 4] = np.nan
    np.savez(tmp_path / "ds" / "test.npz", **test)
    assert main(["evaluate", "--model", str(work / "run"), "--data", str(tmp_path / "ds")]) == 2
    assert _err(capsys) == (f"acd: error: test split of {tmp_path / 'ds'}: every sample has a series with too few "
                            "observed values (two in its first 20 steps, one after them): nothing to evaluate")


def test_help_and_progress(work, tmp_path, capsys):
    "Case 17: the epilog says 80% (not 80%%); a long recording shows progress bars on stderr when asked."
    infer_help = next(a for a in _parser()._actions if a.dest == "command").choices["infer"].format_help()
    assert "80% of" in " ".join(infer_help.split()) and "%%" not in infer_help
    from acd_nb.commands import infer_files
    from acd_nb.pretrained import load_model
    infer_files(load_model(work / "run"), [named_csv(work, tmp_path / "rec.csv")], tmp_path / "o", figures=False,
                progress=True, verbose=False)
    err = capsys.readouterr().err
    assert "reading" in err and "rec.csv" in err and "inferring" in err
