"""The generators of `tools/literature_check.py` draw the graphs their docstrings describe, and stay finite."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

_spec = importlib.util.spec_from_file_location("literature_check",
                                               Path(__file__).parents[1] / "tools" / "literature_check.py")
lit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lit)


def _check(x, edges, b, n, t):
    assert x.shape == (b, n, t) and edges.shape == (b, n, n) and np.isfinite(x).all()
    assert not edges[:, np.arange(n), np.arange(n)].any()   # no self-loops: [k, i, j] = 1 means i causes j


def test_lorenz96_ring():
    x, edges = lit.lorenz96(np.random.default_rng(0), 2, 6, 30, forcing=10.0, burn_in=50)
    _check(x, edges, 2, 6, 30)
    assert (edges.sum(1) == 3).all()                                   # x_{j-2}, x_{j-1}, x_{j+1}
    assert edges[0, 4, 0] and edges[0, 5, 0] and edges[0, 1, 0] and not edges[0, 2, 0]


def test_var3_causes_and_stability():
    x, edges = lit.var3(np.random.default_rng(1), 4, 10, 200)
    _check(x, edges, 4, 10, 200)
    assert (edges.sum(1) == 1).all()                                   # a fifth of 10, itself one of them
    assert np.abs(x).max() < 10                                         # shrunk until stable


def test_multi_lv_blocks():
    x, edges = lit.multi_lv(np.random.default_rng(2), 2, 4, 40, burn_in=10)
    _check(x, edges, 2, 8, 40)
    assert (x >= 0).all()
    assert (edges == edges.transpose(0, 2, 1)).all()                   # predator and prey act on each other
    assert edges[0, 4, 0] and edges[0, 4, 1] and not edges[0, 4, 2]    # predator 0 eats prey 0 and 1
    assert not edges[:, :4, :4].any() and not edges[:, 4:, 4:].any()  # no prey-prey or predator-predator edges


@pytest.mark.parametrize("nonlinear,weibull", [(False, False), (True, True)])
def test_pcmci_process_links(nonlinear, weibull):
    x, edges = lit.pcmci_process(np.random.default_rng(3), 3, 5, 100, max_lag=3, nonlinear=nonlinear, weibull=weibull)
    _check(x, edges, 3, 5, 100)
    assert (edges.sum((1, 2)) == 5).all()                              # N cross links


def test_graphs_match_the_data():
    "Linear Granger reads the linear generators' graphs from their data: the graphs returned are the ones simulated"
    from acd_nb.baselines import get_baseline
    from acd_nb.metrics import edge_auroc
    granger = get_baseline("linear_granger")
    for x, edges in (lit.var3(np.random.default_rng(5), 4, 10, 300),
                     lit.pcmci_process(np.random.default_rng(6), 4, 6, 1000, 1, nonlinear=False, weibull=False)):
        scores = granger.score_batch(x[..., None].astype(np.float32), progress=False)
        assert np.mean(edge_auroc(scores, edges, per_sample=True)) > 0.9
