"""Each experiment notebook's `ci` command, as its introduction shows it: papermill's command line at the default scale.

The commands are `build_docs.DOCS_COMMANDS`; each experiment's test in test_experiments.py (test_exp_temperature.py,
test_exp_unobserved.py, test_pretrained.py) runs its command as a user does, and that run is the docs page."""
import re
import shlex

import nbformat
import pytest

import build_docs
from conftest import ROOT
from test_experiments import EXPERIMENTS


def notebook(name):
    return nbformat.read(ROOT / "nbs" / f"{name}.ipynb", as_version=4)


def intro(name) -> str:
    "The notebook's first markdown cell, whitespace collapsed (a command may wrap there)."
    return " ".join(next(c for c in notebook(name).cells if c.cell_type == "markdown").source.split())


def test_every_experiment_has_a_command():
    assert sorted(build_docs.DOCS_COMMANDS) == EXPERIMENTS


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_command_is_documented_at_the_default_ci_scale(name):
    "The introduction shows the whole command, which runs at the parameters cell's default scale, ci."
    params = next(c for c in notebook(name).cells if c.cell_type == "code").source
    assert re.search(r'^scale = "ci"', params, re.M), f"{name}: the parameters cell's default scale is not ci"
    command = build_docs.DOCS_COMMANDS[name]
    assert shlex.split(command)[:3] == ["papermill", f"nbs/{name}.ipynb", f"_reports/{name}.ipynb"], command
    assert "scale" not in build_docs.command_parameters(command), command
    assert command in intro(name), f"{name}: the introduction does not show `{command}`"


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_papermill_reads_every_parameter(name):
    "papermill parses each assignment of the parameters cell (a comment holding `=` hid sigma: 'Passed unknown parameter')."
    from papermill.translators import PythonTranslator
    cell = next(c for c in notebook(name).cells if "parameters" in c.metadata.get("tags", []))
    assigned = re.findall(r"^(\w+) = ", cell.source, re.M)
    assert [p.name for p in PythonTranslator.inspect(cell)] == assigned, name
    unknown = set(build_docs.command_parameters(build_docs.DOCS_COMMANDS[name])) - set(assigned)
    assert not unknown, f"{name}: its command sets {sorted(unknown)}, which the parameters cell lacks"


def test_command_parameters_read_as_papermills_command_line():
    "-p values typed as papermill types them (numbers, True/False/None, else text); -y as YAML; -p over -y."
    found = build_docs.command_parameters('papermill a.ipynb b.ipynb -p n 3 -p rate 0.5 -p on True -p none None '
                                          '-p names a,b -y "{seeds: [0, 1], n: 9}"')
    assert found == {"n": 3, "rate": 0.5, "on": True, "none": None, "names": "a,b", "seeds": [0, 1]}
    with pytest.raises(ValueError, match="not a papermill command"):
        build_docs.command_parameters("python a.ipynb")
