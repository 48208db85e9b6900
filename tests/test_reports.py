"""The committed reports (reports/<scale>/<experiment>/) keep their contract, the README states their claims as they
are, and tools/make_reports.py publishes a report in one step, leaving the old one in place when a run fails."""
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT
from test_experiments import assert_claims, strict_json

import make_reports
import train_parallel as tp

REPORTS = sorted(p.parent for p in ROOT.glob("reports/*/*/results.json"))


def test_every_report_has_a_notebook_and_a_claim_prefix():
    assert set(make_reports.EXPERIMENTS) == set(CLAIM_PREFIX)
    for name, params in make_reports.REPORTS["cpu"].items():
        assert (ROOT / "nbs" / f"{params.get('notebook', name)}.ipynb").exists(), name
CLAIM_PREFIX = {"exp_kuramoto": "kuramoto", "exp_particles": "particles", "exp_netsim": "netsim",
                "exp_training_size": "training_size", "exp_noise": "noise", "exp_temperature": "temperature",
                "exp_unobserved": "unobserved", "exp_unobserved_uninfluenced": "unobserved",
                "exp_baselines": "baselines", "exp_missing": ("missing", "windows"), "exp_own_data": "own_data",
                "exp_general": "general"}


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_committed_report_keeps_the_contract(report):
    scale, name = report.parent.name, report.name
    res = strict_json((report / "results.json").read_text())
    assert res["parameters"]["scale"] == scale and len(res["parameters"]["seeds"]) >= 3
    assert not Path(res["parameters"]["out_dir"]).is_absolute()  # no machine paths in the published results either
    assert_claims(res, [c["id"] for c in res["claims"]])
    prefixes = CLAIM_PREFIX[name] if isinstance(CLAIM_PREFIX[name], tuple) else (CLAIM_PREFIX[name],)
    assert res["claims"] and all(c["id"].split(".")[0] in prefixes for c in res["claims"])
    nb = nbformat.read(report / f"{name}.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not any(o.output_type == "error" for o in outputs)
    assert any("image/png" in o.get("data", {}) for o in outputs), f"{report}: the executed notebook has no figure"
    text = (report / f"{name}.ipynb").read_text()
    assert str(ROOT) not in text and "\r" not in json.dumps(json.loads(text))  # no machine paths, no raw progress bars
    stderr = [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert not [t for t in stderr if make_reports._PROGRESS_BAR.search(t) or "TqdmWarning" in t], f"{report}: progress bars"
    assert list(report.glob("*.png")) and sum(p.stat().st_size for p in report.iterdir()) < 5_000_000


def test_readme_states_every_committed_claim():
    readme = (ROOT / "README.md").read_text()
    for report in REPORTS:
        scale = report.parent.name
        for c in json.loads((report / "results.json").read_text())["claims"]:
            row = next((l for l in readme.splitlines() if l.startswith(f"| `{c['id']}` | {scale} |")), None)
            assert row is not None, f"README lacks the claim {c['id']} of {report}: run `make readme`"
            assert row.split(" | ")[4] == ("yes" if c["holds"] else "**no**"), row
    assert "](docs/images/claims.png)" in readme and (ROOT / "docs" / "images" / "claims.png").exists()
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "make_readme.py"), "--check"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_collapse_progress_keeps_what_a_terminal_shows():
    bar = "train:  10%|#  | 1/10\rtrain:  20%|## | 2/10\rtrain: 100%|###| 10/10\nseed 0: done\n"
    assert make_reports.collapse_progress(bar) == "train: 100%|###| 10/10\nseed 0: done\n"


def test_published_report_has_no_progress_bars_on_stderr():
    "A published notebook drops finished tqdm bars and tqdm's ipywidgets warning (an interactive run keeps them)."
    cell = nbformat.v4.new_code_cell("train()", outputs=[
        nbformat.v4.new_output("stream", name="stderr", text="train:  50%|#  | 1/2 [00:01<00:01]\rtrain: 100%|##| 2/2 [00:02<00:00, 1.0epoch/s]\n"),
        nbformat.v4.new_output("stream", name="stderr", text="x.py:1: UserWarning: kept\n"),
        nbformat.v4.new_output("stream", name="stdout", text="seed 0: 2 epochs\n")])
    nb = make_reports.clean_report(nbformat.v4.new_notebook(cells=[cell]), Path("/work"), "_reports/ci/x")
    assert [(o.name, o.text) for o in nb.cells[0].outputs] == [("stderr", "x.py:1: UserWarning: kept\n"), ("stdout", "seed 0: 2 epochs\n")]


def test_make_reports_publishes_in_one_step(tmp_path, monkeypatch):
    monkeypatch.setitem(make_reports.REPORTS, "ci", {"exp_datasets": {"scale": "ci", "seeds": [0]}})
    reports, work = tmp_path / "reports", tmp_path / "work"
    make_reports.main(["exp_datasets", "--scale", "ci", "--jobs", "1", "--reports", str(reports), "--work", str(work)])
    published = reports / "ci" / "exp_datasets"
    assert sorted(p.name for p in published.iterdir()) == ["exp_datasets.ipynb", "noise_levels.png", "results.json"]
    text = (published / "exp_datasets.ipynb").read_text()
    assert str(ROOT) not in text and str(tmp_path) not in text
    assert nbformat.read(published / "exp_datasets.ipynb", as_version=4).metadata["acd_report"]["scale"] == "ci"
    before = {p.name: p.read_bytes() for p in published.iterdir()}
    monkeypatch.setitem(make_reports.REPORTS["ci"], "exp_datasets", {"scale": "ci", "seeds": [0], "systems": ["pendulum"]})
    with pytest.raises(SystemExit, match="exp_datasets"):
        make_reports.main(["exp_datasets", "--scale", "ci", "--jobs", "1", "--reports", str(reports), "--work", str(work)])
    assert {p.name: p.read_bytes() for p in published.iterdir()} == before
    (published / "README.md").write_text("how the fits were made\n")        # a hand-written note stays on republishing
    monkeypatch.setitem(make_reports.REPORTS["ci"], "exp_datasets", {"scale": "ci", "seeds": [0]})
    make_reports.main(["exp_datasets", "--scale", "ci", "--jobs", "1", "--reports", str(reports), "--work", str(work)])
    assert (published / "README.md").read_text() == "how the fits were made\n" and (published / "results.json").exists()


def test_publish_a_notebook_run_by_papermill(tmp_path):
    "A notebook executed elsewhere by papermill publishes with papermill's parameters and duration; one not run to its end is refused."
    work = tmp_path / "work"
    work.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")])
    nb.metadata["papermill"] = {"parameters": {"scale": "paper", "seeds": [0], "out_dir": "somewhere"}, "duration": 61.4}
    nbformat.write(nb, work / "exp_particles.ipynb")
    (work / "results.json").write_text(json.dumps({"claims": []}))
    (work / "curve.png").write_bytes(b"png")
    reports = tmp_path / "reports"
    make_reports.main(["--publish", str(work / "exp_particles.ipynb"), "--scale", "paper", "--reports", str(reports),
                       "exp_particles"])
    published = reports / "paper" / "exp_particles"
    assert sorted(p.name for p in published.iterdir()) == ["curve.png", "exp_particles.ipynb", "results.json"]
    meta = nbformat.read(published / "exp_particles.ipynb", as_version=4).metadata["acd_report"]
    assert meta["seconds"] == 61 and meta["parameters"] == {"scale": "paper", "seeds": [0], "out_dir": "_reports/paper/exp_particles"}
    nb.metadata["papermill"]["duration"] = None  # papermill stopped before the end
    nbformat.write(nb, work / "exp_particles.ipynb")
    with pytest.raises(SystemExit, match="not run to its end"):
        make_reports.main(["--publish", str(work / "exp_particles.ipynb"), "--scale", "paper", "--reports",
                           str(reports), "exp_particles"])


def test_train_parallel_runs_the_notebook_up_to_its_training_cell():
    jobs = tp.jobs_of(["seeds=0,1", "methods=none,latent"])
    assert jobs == [{"seeds": [0], "methods": ["none"]}, {"seeds": [0], "methods": ["latent"]},
                            {"seeds": [1], "methods": ["none"]}, {"seeds": [1], "methods": ["latent"]}]
    with pytest.raises(ValueError, match="name=value"): tp.jobs_of(["seeds"])
    for name in ("exp_unobserved", "exp_temperature"):
        nb = tp.with_parameters(json.loads((ROOT / "nbs" / f"{name}.ipynb").read_text()), {"scale": "ci", "seeds": [2]})
        at = tp.parameter_cell_index(nb["cells"])
        injected = nb["cells"][at + 1]
        assert injected["metadata"]["tags"] == ["injected-parameters"] and "seeds = [2]\n" in injected["source"]
        sources = tp.training_sources(nb)
        assert "fit(" in sources[-1] and not any("fit(" in s for s in sources[:-1])
        assert not any("claim(" in s for s in sources), f"{name}: the training phase would reach the claims"
    nb = tp.with_parameters(json.loads((ROOT / "nbs" / "exp_baselines.ipynb").read_text()), {"scale": "ci"})
    assert "fit_or_reuse(name, seed" in tp.training_sources(nb)[-1]   # the baselines' fits, one record per dataset and method
