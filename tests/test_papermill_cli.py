"""Each experiment notebook's example command, run as a user runs it: papermill's command line, at the default `ci`
scale, in a temporary folder laid out like a fresh clone (the notebook and what git ships of `_reports/`)."""
import math
import re
import shlex
import shutil
import subprocess

import nbformat
import pytest

import build_docs
from conftest import BIN, ROOT
from test_experiments import EXPERIMENTS, assert_claims, strict_json

# One command per experiment notebook, from its introduction; `expect`: values of results.json (paths joined by "/")
# that show the parameters were used; `auroc`: an AUROC the run must produce. The introductions of exp_particles and
# exp_unobserved name these parameters but show no whole command at the default scale (theirs run at cpu).
# Measured on one thread: exp_noise 91 s (six models), the others 7-29 s each.
EXAMPLES = {
    "exp_baselines": dict(command="papermill nbs/exp_baselines.ipynb _reports/exp_baselines.ipynb -p settings var1_T200",
                          expect={"parameters/settings": ["var1_T200"]},
                          auroc="summary/ngc_authors_var/var1_T200/auroc_paper/mean"),
    "exp_datasets": dict(command="papermill nbs/exp_datasets.ipynb _reports/exp_datasets.ipynb -p sigma 0.1",
                         expect={"parameters/sigma": 0.1}, auroc=None),
    "exp_granger": dict(command="papermill nbs/exp_granger.ipynb _reports/exp_granger.ipynb -p n_graphs 50",
                        expect={"parameters/n_graphs": 50, "claim_holds": True}, auroc=None),
    "exp_kuramoto": dict(command="papermill nbs/exp_kuramoto.ipynb _reports/exp_kuramoto.ipynb -p baselines linear_granger,mi",
                         expect={"parameters/baselines": ["linear_granger", "mi"]}, auroc="auroc/linear_granger/mean"),
    "exp_missing": dict(command="papermill nbs/exp_missing.ipynb _reports/exp_missing.ipynb -p systems springs",
                        expect={"parameters/systems": ["springs"]}, auroc="table/springs/mask/values/2/mean"),
    "exp_netsim": dict(command="papermill nbs/exp_netsim.ipynb _reports/exp_netsim.ipynb -p baselines linear_granger,mi_lag0",
                       expect={"parameters/baselines": ["linear_granger", "mi_lag0"]}, auroc="auroc/acd/mean"),
    "exp_noise": dict(command="papermill nbs/exp_noise.ipynb _reports/exp_noise.ipynb -p sigma 0.1",
                      expect={"parameters/sigma": [0.0, 0.1]}, auroc="summary/springs/0.1/enc/auroc/mean"),
    "exp_own_data": dict(command="papermill nbs/exp_own_data.ipynb _reports/exp_own_data.ipynb -p systems springs8",
                         expect={"parameters/systems": ["springs8"]}, auroc="auroc/springs8/enc+tta/mean"),
    "exp_particles": dict(command='papermill nbs/exp_particles.ipynb _reports/exp_particles.ipynb -p seeds "[1]"',
                          expect={"parameters/seeds": [1]}, auroc="summary/enc+tta/auroc/mean"),
    "exp_pretrained": dict(command='papermill nbs/exp_pretrained.ipynb _reports/exp_pretrained.ipynb -p systems kuramoto '
                                   '-y "observables: {kuramoto: [1]}"',
                           expect={"parameters/observables": {"kuramoto": [1]}, "installed": []},
                           auroc="auroc/kuramoto/enc/mean"),
    "exp_temperature": dict(command='papermill nbs/exp_temperature.ipynb _reports/exp_temperature.ipynb -p methods latent '
                                    '-p oracles "[]"',
                            expect={"parameters/methods": ["latent"], "parameters/oracles": []},
                            auroc="summary/2/latent/auroc/mean"),
    "exp_training_size": dict(command="papermill nbs/exp_training_size.ipynb _reports/exp_training_size.ipynb -p systems springs",
                              expect={"parameters/systems": ["springs"]}, auroc="summary/springs/256/tta/auroc/mean"),
    "exp_unobserved": dict(command="papermill nbs/exp_unobserved.ipynb _reports/exp_unobserved.ipynb "
                                   "-p uninfluenced_influencer True -p epochs_per_model 10",
                           expect={"parameters/uninfluenced_influencer": True, "parameters/epochs_per_model": 10},
                           auroc="summary/latent/auroc/mean"),
}


def notebook(name):
    return nbformat.read(ROOT / "nbs" / f"{name}.ipynb", as_version=4)


def intro(name) -> str:
    "The notebook's first markdown cell, whitespace collapsed (a command may wrap there)."
    return " ".join(next(c for c in notebook(name).cells if c.cell_type == "markdown").source.split())


def dig(res: dict, path: str):
    for key in path.split("/"): res = res[int(key)] if isinstance(res, list) else res[key]
    return res


def test_every_experiment_has_an_example():
    assert sorted(EXAMPLES) == EXPERIMENTS


def options(command: str) -> list[list[str]]:
    "The `-p name value` and `-y yaml` options of `papermill IN OUT ...`, each as its words."
    words = shlex.split(command)[3:]
    found = []
    while words:
        size = {"-p": 3, "-y": 2}.get(words[0])
        assert size and len(words) >= size, f"`{command}`: expected -p name value or -y yaml at {words}"
        found.append(words[:size])
        words = words[size:]
    return found


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_example_is_documented_at_the_default_ci_scale(name):
    "The introduction shows the command, or (the notebooks noted above) its head and the name of each parameter it sets."
    params = next(c for c in notebook(name).cells if c.cell_type == "code").source
    assert re.search(r'^scale = "ci"', params, re.M), f"{name}: the parameters cell's default scale is not ci"
    text, command = intro(name), EXAMPLES[name]["command"]
    head = f"papermill nbs/{name}.ipynb _reports/{name}.ipynb"
    assert shlex.split(command)[:3] == head.split() and head in text, f"{name}: the introduction does not show `{head}`"
    if command in text: return
    for option in options(command):
        assert option[0] == "-p", f"{name}: `{command}` must appear whole in the introduction"
        assert f"-p {option[1]}" in text or f"`{option[1]}`" in text, f"{name}: the introduction does not name `{option[1]}`"


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_papermill_reads_every_parameter(name):
    "papermill parses each assignment of the parameters cell (a comment holding `=` hid sigma: 'Passed unknown parameter')."
    from papermill.translators import PythonTranslator
    cell = next(c for c in notebook(name).cells if "parameters" in c.metadata.get("tags", []))
    assigned = re.findall(r"^(\w+) = ", cell.source, re.M)
    assert [p.name for p in PythonTranslator.inspect(cell)] == assigned, name


def run_example(name, tmp_path) -> dict:
    "Run EXAMPLES[name]'s command with papermill's CLI in `tmp_path`, laid out as a fresh clone; return its results.json."
    shipped = subprocess.run(["git", "ls-files", "--", f"nbs/{name}.ipynb", "_reports"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.split()
    for rel in shipped:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    words = shlex.split(EXAMPLES[name]["command"])
    cmd = [str(BIN / "papermill"), *words[1:], "--execution-timeout", "600", "--no-progress-bar"]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"`{EXAMPLES[name]['command']}` failed:\n{done.stderr[-4000:]}"
    assert (tmp_path / "_reports" / f"{name}.ipynb").stat().st_size > 0
    build_docs.keep_executed(name, tmp_path / "_reports" / f"{name}.ipynb", root=tmp_path)  # its docs page, if it ran as that does
    return strict_json((tmp_path / "_reports" / name / "results.json").read_text())


def check_example(name, res):
    example = EXAMPLES[name]
    for path, value in example["expect"].items():
        assert dig(res, path) == value, (name, path)
    if example["auroc"]:
        auroc = dig(res, example["auroc"])
        assert math.isfinite(auroc) and 0.0 <= auroc <= 1.0, (name, example["auroc"], auroc)


@pytest.mark.parametrize("name", [n for n in EXPERIMENTS if n != "exp_noise"])
def test_example_runs(name, tmp_path):
    check_example(name, run_example(name, tmp_path))


def test_exp_noise_sigma_alone(tmp_path):
    """Issue 32: `-p sigma 0.1` alone also runs σ = 0, whose models the σ > 0 models start from (the notebook's
    protocol), and fits no baseline, since only the σ = 0.2 claim reads them."""
    assert EXAMPLES["exp_noise"]["command"] in intro("exp_noise")
    res = run_example("exp_noise", tmp_path)
    check_example("exp_noise", res)
    p = res["parameters"]
    systems = ["springs", "kuramoto"]
    assert (p["sigma"], p["sigma_one_seed"], p["systems"], p["relative_sigma"]) == ([0.0, 0.1], [], systems, True)
    reported = res["reported_protocol"]  # σ > 0: warm-started from the σ = 0 model; the first seed also from scratch
    assert reported == {"0": "scratch", "0.1": "warm"}
    runs = {(r["system"], r["sigma"]): r for r in res["runs"] if r["protocol"] == reported[f"{r['sigma']:g}"]}
    for system in systems:
        assert [r["protocol"] for r in res["runs"] if (r["system"], r["sigma"]) == (system, 0.1)] == ["warm", "scratch"]
        assert set(res["summary"][system]) == {"0", "0.1"}
        assert res["transfer"][system]["0.1"]["n"] == 1  # the σ = 0 model on σ = 0.1 test data
        for m in ("enc", "enc+tta"):
            assert 0.0 <= runs[system, 0.1][m]["auroc"] <= 1.0
        # paper units: σ = 0.1 adds noise of std 0.1 * std / 0.6, and that is what the dataset was built with
        std = res["data_std"][system]["0"]
        assert runs[system, 0.0]["data_noise_sigma"] == 0.0
        assert runs[system, 0.1]["data_noise_sigma"] == pytest.approx(runs[system, 0.1]["noise_std_added"]) \
            == pytest.approx(0.1 * std / 0.6)
    assert not any("baselines_noiseless" in r for r in res["runs"])
    assert 0.2 < res["data_std"]["springs"]["0"] < 0.45  # springs' normalised data: about 0.31, half the paper's 0.6
    springs0, springs1 = runs["springs", 0.0], runs["springs", 0.1]
    # measured: noiseless springs Enc+TTA AUROC 0.777 (60 ci epochs); noisy targets put a floor of about the noise
    # variance under the MSE
    assert springs0["enc+tta"]["auroc"] > 0.65 and len(springs0["learning_curve"]["minutes"]) == 60
    assert springs1["enc+tta"]["mse_teacher_10"] > 0.9 * springs1["noise_std_added"] ** 2
    assert springs1["enc+tta"]["mse_teacher_10"] > springs0["enc+tta"]["mse_teacher_10"]
    assert_claims(res, ["noise.graceful", "noise.sigma02_matches_noiseless_baselines"])
    assert res["claims"][1]["ours"].startswith("not measured") and not res["claims"][1]["holds"]  # no σ = 0.2 here
    for figure in ("auroc_vs_noise.png", "learning_curves.png"):
        assert (tmp_path / "_reports" / "exp_noise" / figure).stat().st_size > 10_000
