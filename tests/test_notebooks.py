"""Every library notebook runs top to bottom, its test cells included: the notebooks' tests

Each runs as the docs build runs it (`build_docs.execute_for_docs`, one torch thread), into the docs build's cache, so
`make test` runs the notebooks here, in the pytest workers beside the other tests, and tests/test_docs.py then renders
the cached copies. Each experiment notebook (`exp_*`) runs its introduction's command in its own test
(test_experiments.py), whose run is kept as its page."""
import nbformat
import pytest

import build_docs

LIBRARY = [n for n in build_docs.notebook_names() if not n.startswith("exp_")]


def errors(nb) -> list[str]:
    "The error outputs of an executed notebook, as `name: value` lines."
    return [f"{o.ename}: {o.evalue}" for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]


@pytest.mark.parametrize("name", LIBRARY)
def test_notebook_runs(name):
    nb = nbformat.read(build_docs.execute_for_docs(name), as_version=4)
    assert errors(nb) == [], name
    # it ran every cell: the executed copy has an execution count on each code cell of the source
    assert all(c.execution_count for c in nb.cells if c.cell_type == "code" and c.source.strip()), name
