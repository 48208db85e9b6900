"""Write README.md from nbs/index.ipynb, offline (nbdev-readme needs Quarto, which cannot be installed here).

Cells marked `#| hide` or `#| echo: false` (figures for the docs site) are left out, nbdev directive lines are dropped from code cells, and the
notebook's text outputs are kept. The marker `<!-- claims -->` becomes the table of the paper's claims as the
committed reports (`reports/<scale>/<experiment>/results.json`) state them. It also writes the package docstring
(`acd_nb/__init__.py`): the list of modules, each with the summary of its own docstring, so it cannot go stale.
`python tools/make_readme.py --check` exits 1 when README.md or the package docstring is stale.
"""
import argparse
import ast
import re
import sys
from pathlib import Path

import nbformat
from nbconvert import MarkdownExporter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from make_reports import EXPERIMENTS  # noqa: E402

CLAIMS_MARKER = "<!-- claims -->"
HEADER = "<!-- generated from nbs/index.ipynb by tools/make_readme.py: edit the notebook, then run `make readme` -->\n\n"


def _directives(src: str) -> list[str]:
    return [line[3:].strip() for line in src.splitlines() if line.startswith("#| ")]


def render_readme(nb_path: Path = ROOT / "nbs" / "index.ipynb", reports_root: Path = ROOT / "reports") -> str:
    nb = nbformat.read(nb_path, as_version=4)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            # hidden cells, and `echo: false` cells (figures for the docs site, which a README cannot show)
            if any(d.startswith("hide") or d.replace(" ", "") == "echo:false" for d in _directives(cell.source)): continue
            cell.source = "\n".join(l for l in cell.source.splitlines() if not l.startswith("#| ")).strip()
            if not cell.source: continue
        cells.append(cell)
    nb.cells = cells
    body, _ = MarkdownExporter(exclude_raw=True).from_notebook_node(nb)
    if CLAIMS_MARKER not in body: raise SystemExit(f"{nb_path} lacks the marker {CLAIMS_MARKER} for the claims table")
    from acd_nb.reports import load_reports, results_markdown
    body = body.replace(CLAIMS_MARKER, results_markdown(load_reports(reports_root), EXPERIMENTS))
    return HEADER + body.strip() + "\n"


def package_docstring(package: Path = ROOT / "acd_nb") -> str:
    "The package docstring: its title line, then every public module with the summary of its docstring (before `Docs:`)."
    title = ast.get_docstring(ast.parse((package / "__init__.py").read_text())).split("\n")[0]
    lines = []
    for path in sorted(package.glob("[a-z]*.py")):
        summary = (ast.get_docstring(ast.parse(path.read_text())) or "").split("\n\nDocs:")[0]
        lines.append(f"- `acd_nb.{path.stem}`: {' '.join(summary.split())}")
    return f"{title}\n\nModules:\n\n" + "\n".join(lines)


def render_init(package: Path = ROOT / "acd_nb") -> str:
    "`__init__.py` with its docstring replaced by `package_docstring()`."
    text = (package / "__init__.py").read_text()
    return re.sub(r'\A""".*?"""', lambda _: f'"""{package_docstring(package)}"""', text, count=1, flags=re.DOTALL)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="fail if README.md differs from the notebook")
    args = ap.parse_args()
    text, readme = render_readme(), ROOT / "README.md"
    init_text, init = render_init(), ROOT / "acd_nb" / "__init__.py"
    if args.check:
        if not readme.exists() or readme.read_text() != text:
            sys.exit("README.md is out of date with nbs/index.ipynb or reports/: run `make readme`")
        if init.read_text() != init_text:
            sys.exit("acd_nb/__init__.py's module list is out of date with the modules' docstrings: run `make readme`")
    else:
        readme.write_text(text)
        init.write_text(init_text)
        print(f"wrote {readme} and {init}")
