"""Write README.md from nbs/index.ipynb, offline (nbdev-readme needs Quarto, which cannot be installed here).

Cells marked `#| hide` or `#| echo: false` (figures for the docs site) are left out, nbdev directive lines are dropped from code cells, and the
notebook's text outputs are kept. The marker `<!-- claims -->` becomes the short table of the paper's claims as the
committed reports (`reports/<scale>/<experiment>/results.json`) state them, with the figure of each claim's number
beside the paper's (docs/images/claims.png, written here too; the docs site shows the same figure).
`python tools/make_readme.py --check` exits 1 when README.md or the figure is stale.
"""
import argparse
import sys
from pathlib import Path

import nbformat
from nbconvert import MarkdownExporter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from build_docs import CLAIMS_FIGURE, claims_figure_png, directives, strip_directives  # noqa: E402
from make_reports import EXPERIMENTS  # noqa: E402

CLAIMS_MARKER = "<!-- claims -->"
FIGURE = ROOT / "docs" / CLAIMS_FIGURE
HEADER = "<!-- generated from nbs/index.ipynb by tools/make_readme.py: edit the notebook, then run `make readme` -->\n\n"


def render_readme(nb_path: Path = ROOT / "nbs" / "index.ipynb", reports_root: Path = ROOT / "reports") -> tuple[str, bytes | None]:
    "README.md's text and the claims figure's PNG (None when no claim has a point)"
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
    reports = load_reports(reports_root)
    figure = claims_figure_png(reports)
    claims = results_markdown(reports, EXPERIMENTS, figure=FIGURE.relative_to(ROOT).as_posix() if figure else None)
    return HEADER + body.replace(CLAIMS_MARKER, claims).strip() + "\n", figure


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="fail if README.md differs from the notebook")
    args = ap.parse_args()
    (text, figure), readme = render_readme(), ROOT / "README.md"
    if args.check:
        if not readme.exists() or readme.read_text() != text:
            sys.exit("README.md is out of date with nbs/index.ipynb or reports/: run `make readme`")
        if figure is not None and (not FIGURE.exists() or FIGURE.read_bytes() != figure):
            sys.exit(f"{FIGURE.relative_to(ROOT)} is out of date with reports/: run `make readme`")
    else:
        readme.write_text(text)
        if figure is not None:
            FIGURE.parent.mkdir(parents=True, exist_ok=True)
            FIGURE.write_bytes(figure)
        print(f"wrote {readme}" + (f" and {FIGURE.relative_to(ROOT)}" if figure is not None else ""))
