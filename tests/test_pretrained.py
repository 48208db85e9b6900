"The models shipped in acd_nb/pretrained_models/ reproduce their model cards on fresh data; exp_pretrained writes cards at ci scale."
import json

import numpy as np
import papermill as pm
import pytest

from acd_nb.infer import infer
from acd_nb.metrics import edge_auroc
from acd_nb.pretrained import (list_pretrained, load_model, load_pretrained, prepare_series, pretrained_dir,
                               simulate_test_set)
from conftest import ROOT

SHIPPED = list_pretrained()
no_models = pytest.mark.skipif(not SHIPPED, reason="no models are shipped yet: run nbs/exp_pretrained.ipynb with install=True")


@no_models
@pytest.mark.parametrize("name", SHIPPED or ["none"])
def test_shipped_model_matches_its_card_on_fresh_data(name):
    loaded = load_model(name)
    card = loaded.info["meta"]
    n = card["test"]["n_samples"]
    fresh = simulate_test_set(loaded, n, seed=1)  # the card's numbers come from the training dataset's own test split
    probs = infer(loaded.model, fresh["x"][:, :, :loaded.infer_steps], "enc", progress=False)
    auroc = edge_auroc(probs, fresh["edges"])
    assert abs(auroc - card["test"]["enc"]["auroc"]) <= 0.02, (name, auroc, card["test"]["enc"]["auroc"])


@no_models
@pytest.mark.parametrize("name", SHIPPED or ["none"])
def test_shipped_model_folder_is_complete(name):
    model, card = load_pretrained(name)
    folder = pretrained_dir() / name
    assert card["name"] == name and card["system"] in ("springs", "kuramoto", "mixture")  # mixture: `general`
    assert {"enc", "enc+tta"} <= set(card["test"]) and card["training"]["minutes"] > 0
    assert (folder / "card.md").read_text().startswith(f"# Model card: `{name}`")
    assert (folder / "model.pt").stat().st_size < 20e6


def test_exp_pretrained_writes_model_cards(tmp_path):
    shipped_before = list_pretrained()
    out_dir = tmp_path / "exp_pretrained"
    pm.execute_notebook(str(ROOT / "nbs" / "exp_pretrained.ipynb"), str(tmp_path / "exp_pretrained.out.ipynb"),
                        parameters={"scale": "ci", "out_dir": str(out_dir), "tta_steps": 3},
                        cwd=str(ROOT / "nbs"), kernel_name="python3", execution_timeout=600, progress_bar=False)
    res = json.loads((out_dir / "results.json").read_text())
    assert res["parameters"]["tta_steps"] == 3 and res["installed"] == []
    assert list_pretrained() == shipped_before  # install=False leaves the package alone
    assert list_pretrained(out_dir / "models") == ["kuramoto", "springs"]
    for run in res["runs"]:
        loaded = load_model(run["model_dir"])
        card = loaded.info["meta"]
        assert card["test"]["tta_steps"] == 3 and 0 <= card["test"]["enc"]["auroc"] <= 1
        assert card["test"]["enc"]["auroc"] == run["test"]["enc"]["auroc"] and card["paper"]["enc"] in (0.999, 0.952)
        assert card["normalizer"]["mins"] and card["data"]["n_test"] == card["test"]["n_samples"]


def test_exp_pretrained_observables_trains_on_sin_phi_alone(tmp_path):
    "The introduction's `ci` command: a Kuramoto model of one feature, sin φ, with its card; nothing installed."
    from test_experiments import run_example
    shipped_before = list_pretrained()
    res, out = run_example("exp_pretrained", tmp_path)
    assert res["parameters"]["observables"] == {"kuramoto": [1]} and res["installed"] == []
    assert list_pretrained() == shipped_before and list_pretrained(out / "models") == ["kuramoto-sin_phi"]
    card = load_model(out / "models" / "kuramoto-sin_phi").info["meta"]
    assert 0 <= card["test"]["enc"]["auroc"] <= 1 and card["test"]["enc"]["auroc"] == res["auroc"]["kuramoto"]["enc"]["mean"]


def test_decoder_graph_check_finds_the_true_graph_lowest_for_the_springs_model():
    "tools/decoder_graph_check.py: the shipped springs model, trained with the ELBO, puts its lowest NLL at the true graph"
    from decoder_graph_check import nll_by_graph
    nll = nll_by_graph(load_model("springs"), "springs", n=5, samples=8, steps=100, seed=5)
    assert set(nll) == {"true", "full", "empty"}
    # measured: true 1.0e4, full 1.2e6, empty 6.6e5 per node
    assert nll["true"] < 0.1 * min(nll["full"], nll["empty"])


@pytest.mark.skipif("general" not in SHIPPED, reason="the general model is not shipped")
def test_general_model_says_when_a_recording_has_more_series_than_it_was_tested_on():
    general, rng = load_model("general"), np.random.default_rng(0)
    low, high = general.info["data"]["mixture"]["n_nodes"]
    tested = max(general.info["meta"]["test"]["n_nodes"])
    _, notes = prepare_series(general, rng.normal(size=(1, tested, 60, 1)))
    assert f"model 'general' was trained on {low} to {high} series and input has {tested}: its card gives its AUROC up to " \
           f"{tested} series" in notes
    _, notes = prepare_series(general, rng.normal(size=(1, tested + 1, 60, 1)))
    assert any(n.startswith("warning: ") and f"more than the {tested} it was tested on" in n for n in notes), notes
    _, notes = prepare_series(general, rng.normal(size=(1, high, 60, 1)))
    assert not any("was trained on" in n for n in notes), notes


@pytest.mark.skipif("general" not in SHIPPED, reason="the general model is not shipped")
def test_general_model_warns_of_recordings_shorter_than_it_was_trained_on():
    "On 10 steps of independent noise the general model put 18 of 20 edges above 0.5: a user is told the length is why"
    general, rng = load_model("general"), np.random.default_rng(0)
    shortest = general.info["data"]["mixture"]["n_steps"][0]
    _, notes = prepare_series(general, rng.normal(size=(1, 5, shortest - 1, 1)))
    assert any(n.startswith(f"warning: input has {shortest - 1} time steps, fewer than the {shortest}") for n in notes), notes
    _, notes = prepare_series(general, rng.normal(size=(1, 5, shortest, 1)))
    assert not any("fewer than the" in n for n in notes), notes


@pytest.mark.skipif("general" not in SHIPPED, reason="the general model is not shipped")
def test_evaluate_model_reads_more_series_than_tested_in_subsets_as_infer_does():
    "acd evaluate of a 60-series dataset scores the graph acd infer gives it (subsets of the tested N), not the whole"
    from acd_nb.commands import evaluate_model
    general, rng = load_model("general"), np.random.default_rng(0)
    n = general.max_series + 10
    x, _ = prepare_series(general, rng.normal(size=(1, n, general.infer_steps, 1)).cumsum(2))
    edges = (rng.random((1, n, n)) < 0.05).astype(float)
    _, outputs = evaluate_model(general, x, edges)
    np.testing.assert_allclose(outputs["probs"], infer(general.model, x, max_series=general.max_series).numpy(), atol=1e-6)
    assert not np.allclose(outputs["probs"], infer(general.model, x).numpy(), atol=1e-3)


@pytest.mark.skipif("general" not in SHIPPED, reason="the general model is not shipped")
def test_general_model_note_names_both_window_sizes():
    "A recording between one and two of the general model's windows long is read in windows of 100 and whole"
    general, rng = load_model("general"), np.random.default_rng(0)
    _, notes = prepare_series(general, rng.normal(size=(1, 5, 150, 1)))
    assert any(n.endswith("the 150 steps are read in 2 windows 50 steps apart and whole, their edge probabilities "
                          "averaged") for n in notes), notes
