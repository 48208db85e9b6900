"""tools/widen_general.py: a general-model checkpoint carried over to the encoder with the generic Granger evidence
computes the old edge logits plus the weighted evidence, one carried over to the values' Granger statistic at more lags
or at lag 1 alone computes the old edge logits, and none writes over an existing file."""
import subprocess
import sys

import torch
import torch.nn.functional as F

from conftest import ROOT
from acd_nb.core import seed_everything
from acd_nb.encoders import evidence_wald
from acd_nb.model import ACD, ACDConfig
from acd_nb.nn import pair_index

TOOL = [sys.executable, str(ROOT / "tools" / "widen_general.py")]
CONFIG = dict(n_features=2, encoder="stats", hidden=16, mask_input=True, mean_messages=True, max_window=40)


def test_widened_checkpoint_adds_the_evidence_to_the_old_logits(tmp_path):
    seed_everything(0)
    old = ACD(ACDConfig(**CONFIG)).eval()
    torch.save({"config": old.cfg.to_dict(), "model": old.state_dict()}, tmp_path / "best.pt")
    out = tmp_path / "evidence.pt"
    subprocess.run([*TOOL, "--evidence", str(tmp_path / "best.pt"), "--out", str(out)], check=True, cwd=ROOT)
    ckpt = torch.load(out, weights_only=False)
    assert ckpt["config"] == {**old.cfg.to_dict(), "evidence": True} and "optimizer" not in ckpt
    new = ACD(ACDConfig(**ckpt["config"])).eval()
    new.load_state_dict(ckpt["model"])
    x = torch.cat([torch.randn(3, 5, 40, 2), torch.ones(3, 5, 40, 2)], -1)   # values and the observation mask
    with torch.no_grad(): before, after = old.encoder(x), new.encoder(x)
    send, recv = pair_index(5)
    enc = new.encoder
    evidence = F.softplus(enc.evidence_weight) * (evidence_wald(x[..., :2])[:, send, recv] @ torch.softmax(enc.evidence_mix, 0))
    torch.testing.assert_close(after[..., 0], before[..., 0])
    torch.testing.assert_close(after[..., 1], before[..., 1] + evidence, atol=1e-4, rtol=1e-4)
    again = subprocess.run([*TOOL, "--evidence", str(tmp_path / "best.pt"), "--out", str(out)], cwd=ROOT,
                           capture_output=True, text=True)
    assert again.returncode != 0 and "exists" in again.stderr


def test_widened_checkpoint_with_value_lags_keeps_the_old_logits(tmp_path):
    seed_everything(0)
    old = ACD(ACDConfig(**CONFIG)).eval()
    torch.save({"config": old.cfg.to_dict(), "model": old.state_dict()}, tmp_path / "best.pt")
    out = tmp_path / "lags.pt"
    subprocess.run([*TOOL, "--value-lags", "5", str(tmp_path / "best.pt"), "--out", str(out)], check=True, cwd=ROOT)
    ckpt = torch.load(out, weights_only=False)
    assert ckpt["config"] == {**old.cfg.to_dict(), "value_lags": 5}
    new = ACD(ACDConfig(**ckpt["config"])).eval()
    new.load_state_dict(ckpt["model"])
    assert new.encoder.edge1[0].in_features == old.encoder.edge1[0].in_features + 2
    x = torch.cat([torch.randn(3, 5, 40, 2), torch.ones(3, 5, 40, 2)], -1)
    with torch.no_grad(): torch.testing.assert_close(new.encoder(x), old.encoder(x))
    again = subprocess.run([*TOOL, "--value-lags", "5", str(tmp_path / "best.pt"), "--out", str(out)], cwd=ROOT,
                           capture_output=True, text=True)
    assert again.returncode != 0 and "exists" in again.stderr


def test_value_lags_widen_a_model_with_the_evidence_before_its_columns(tmp_path):
    seed_everything(0)
    old = ACD(ACDConfig(**CONFIG, evidence=True)).eval()
    torch.save({"config": old.cfg.to_dict(), "model": old.state_dict()}, tmp_path / "best.pt")
    out = tmp_path / "lags.pt"
    subprocess.run([*TOOL, "--value-lags", "5", str(tmp_path / "best.pt"), "--out", str(out)], check=True, cwd=ROOT)
    ckpt = torch.load(out, weights_only=False)
    new = ACD(ACDConfig(**ckpt["config"])).eval()
    new.load_state_dict(ckpt["model"])
    x = torch.cat([torch.randn(3, 5, 40, 2), torch.ones(3, 5, 40, 2)], -1)
    with torch.no_grad(): torch.testing.assert_close(new.encoder(x), old.encoder(x))


def test_values_at_lag1_widens_after_the_lags_column_and_keeps_the_old_logits(tmp_path):
    seed_everything(0)
    old = ACD(ACDConfig(**CONFIG, value_lags=5)).eval()
    torch.save({"config": old.cfg.to_dict(), "model": old.state_dict()}, tmp_path / "best.pt")
    out = tmp_path / "lag1.pt"
    subprocess.run([*TOOL, "--values-at-lag1", str(tmp_path / "best.pt"), "--out", str(out)], check=True, cwd=ROOT)
    ckpt = torch.load(out, weights_only=False)
    assert ckpt["config"] == {**old.cfg.to_dict(), "values_at_lag1": True}
    new = ACD(ACDConfig(**ckpt["config"])).eval()
    new.load_state_dict(ckpt["model"])
    assert new.encoder.edge1[0].in_features == old.encoder.edge1[0].in_features + 2
    x = torch.cat([torch.randn(3, 5, 40, 2), torch.ones(3, 5, 40, 2)], -1)
    with torch.no_grad(): torch.testing.assert_close(new.encoder(x), old.encoder(x))
    # each direction's block gains one zero column at its end (no evidence here), after the lags column
    n_old = old.encoder.pair_features(torch.zeros(1, 2, 10, 4))[0].shape[-1]
    w_new, w_old = ckpt["model"]["encoder.edge1.0.weight"], old.state_dict()["encoder.edge1.0.weight"]
    for first_old, first_new in ((0, 0), (n_old, n_old + 1)):
        assert (w_new[:, first_new + n_old] == 0).all()
        torch.testing.assert_close(w_new[:, first_new:first_new + n_old], w_old[:, first_old:first_old + n_old])
