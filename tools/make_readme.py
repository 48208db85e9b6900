"""Write README.md from nbs/index.ipynb, offline (nbdev-readme needs Quarto, which cannot be installed here).

Cells marked `#| hide` or `#| echo: false` (figures for the docs site) are left out, nbdev directive lines are dropped from code cells, and the
notebook's text outputs are kept. The marker `<!-- claims -->` becomes the table of the paper's claims as the
committed reports (`reports/<scale>/<experiment>/results.json`) state them. `python tools/make_readme.py --check`
exits 1 when README.md is stale.
"""
import argparse
import sys
from pathlib import Path

import nbformat
from nbconvert import MarkdownExporter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from build_docs import directives, strip_directives  # noqa: E402
from make_reports import EXPERIMENTS  # noqa: E402

CLAIMS_MARKER = "<!-- claims -->"
HEADER = "<!-- generated from nbs/index.ipynb by tools/make_readme.py: edit the notebook, then run `make readme` -->\n\n"


def render_readme(nb_path: Path = ROOT / "nbs" / "index.ipynb", reports_root: Path = ROOT / "reports") -> str:
    nb = nbformat.read(nb_path, as_version=4)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            # hidden cells, and `echo: false` cells (figures for the docs site, which a README cannot show)
            found = directives(cell.source)
            if "hide" in found or found.get("echo") == "false": continue
            cell.source = strip_directives(cell.source)
            if not cell.source: continue
        cells.append(cell)
    nb.cells = cells
    body, _ = MarkdownExporter(exclude_raw=True).from_notebook_node(nb)
    if CLAIMS_MARKER not in body: raise SystemExit(f"{nb_path} lacks the marker {CLAIMS_MARKER} for the claims table")
    from acd_nb.reports import load_reports, results_markdown
    body = body.replace(CLAIMS_MARKER, results_markdown(load_reports(reports_root), EXPERIMENTS))
    return HEADER + body.strip() + "\n"


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="fail if README.md differs from the notebook")
    args = ap.parse_args()
    text, readme = render_readme(), ROOT / "README.md"
    if args.check:
        if not readme.exists() or readme.read_text() != text:
            sys.exit("README.md is out of date with nbs/index.ipynb or reports/: run `make readme`")
    else:
        readme.write_text(text)
        print(f"wrote {readme}")
