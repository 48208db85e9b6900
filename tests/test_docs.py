"""The docs site builds offline (tools/build_docs.py, what `make docs` runs): every notebook has a page with its
title and its figures, each module an API reference page, and Chromium renders pages that are not blank.

The build executes every notebook top to bottom, test cells included (the build stops on a failing cell;
`test_every_notebook_has_a_page_with_its_title_and_figures` checks each executed copy for errors), as nbdev-test
would (no notebook has `#| eval: false` cells, the one difference between the two, and a test below keeps it so).
`make test` runs this file after the rest of the suite.

The build reuses the executed notebooks cached in _docs_build/ (keyed by notebook, library sources and
parameters), so after `make docs`, or after the rest of the suite (tests/test_notebooks.py executes the library
notebooks into that cache, and the experiment tests keep their runs with a page's parameters), this test only
renders; run alone on a fresh clone it executes every notebook (experiments at ci scale), several minutes.
Screenshots are kept in _docs_build/screenshots/.
"""
import ast
import html
import json
import re
import shutil
import subprocess
import sys

import nbformat
import numpy as np
import pytest
from PIL import Image

from conftest import ROOT

import build_docs

NAMES = build_docs.notebook_names()
MODULES = sorted(p.stem for p in (ROOT / "acd_nb").glob("*.py") if not p.stem.startswith("_"))
SCREENSHOTS = ROOT / "_docs_build" / "screenshots"
PNG_IN_PAGE = 'src="data:image/png;base64,'


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    site_dir = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, str(ROOT / "tools" / "build_docs.py"), "--site-dir", str(site_dir)],
                   cwd=ROOT, check=True, timeout=1500)
    return site_dir


def executed(name):
    return nbformat.read(ROOT / "_docs_build" / "executed" / f"{name}.ipynb", as_version=4)


def test_no_notebook_skips_cells():
    "nbdev-test skips `#| eval: false` cells and the docs build runs them: none, so both run the same cells."
    skipping = [n for n in NAMES if re.search(r"#\|\s*eval:\s*false", (ROOT / "nbs" / f"{n}.ipynb").read_text())]
    assert skipping == [], skipping


def has_figure(nb):
    return any("image/png" in out.get("data", {}) for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs)


def test_every_notebook_has_a_page_with_its_title_and_figures(site):
    assert "index" in NAMES and any(n.startswith("exp_") for n in NAMES)
    with_figures = []
    for name in NAMES:
        nb = executed(name)
        page = (site / f"{name}.html").read_text()
        title = html.escape(build_docs.notebook_title(nb), quote=False)
        assert re.search(rf"<h1[^>]*>\s*{re.escape(title)}", page), f"{name}.html lacks its title {title!r} as a heading"
        if name != "index":  # the home page's <title> is the site's name
            assert f"<title>{title}" in page, f"{name}.html: <title> is not the notebook's title"
        assert not any(out.output_type == "error" for cell in nb.cells for out in cell.get("outputs", [])), name
        if has_figure(nb):
            with_figures.append(name)
            assert PNG_IN_PAGE in page, f"{name}.html lacks the figure its notebook draws"
    # every notebook that calls plt.show must have come out with a figure (execution kept the PNG outputs)
    plotting = {n for n in NAMES if "plt.show(" in (ROOT / "nbs" / f"{n}.ipynb").read_text()}
    assert plotting <= set(with_figures), f"notebooks drawing but without figures: {plotting - set(with_figures)}"
    assert {n for n in NAMES if n.startswith("exp_")} <= set(with_figures)


def test_results_page_and_report_pages(site):
    "The Results page lists every claim of the committed reports; each report has a page with its figures."
    page = (site / "results.html").read_text()
    reports = sorted(ROOT.glob("reports/*/*/results.json"))
    for path in reports:
        scale, name = path.parent.parent.name, path.parent.name
        for c in json.loads(path.read_text())["claims"]:
            assert c["id"] in page, f"results.html lacks the claim {c['id']} of {scale}/{name}"
        report_page = (site / build_docs.report_page(scale, name).replace(".ipynb", ".html")).read_text()
        assert f"Report ({scale})" in report_page and PNG_IN_PAGE in report_page
        assert "acd-report-figures" in report_page and "Claims:" in report_page  # the header above the notebook
        assert str(ROOT) not in report_page
    if not reports: assert "No report with claims is committed yet" in page
    else: assert 'src="images/claims.png"' in page and (site / "images" / "claims.png").stat().st_size > 10_000
    if any(p.parent.name == "exp_kuramoto" for p in reports):  # the experiment's page links to its report
        assert "report_cpu_exp_kuramoto.html" in (site / "exp_kuramoto.html").read_text()


def test_pages_show_no_machine_paths(site):
    # experiment outputs print their out_dir (an absolute path under the build folder) and results.json's location
    for name in NAMES:
        page = (site / f"{name}.html").read_text()
        assert str(ROOT) not in page, f"{name}.html shows a path of the build machine"
        assert "pytest-of-" not in page, f"{name}.html shows a test's temporary folder (a copy kept from a test run)"


def test_hidden_cells_and_directives_stay_out(site):
    page = (site / "00_core.html").read_text()
    assert "#|" not in page and "fastcore.test import" not in page  # `#| hide` cell and directive lines
    # the exported source is replaced by its show_doc output: signature and docstring
    assert "offdiag_pairs" in page and "def offdiag_pairs" not in page


def test_api_reference_has_signatures_and_docstrings(site):
    for module in MODULES:
        page = (site / "api" / f"{module}.html").read_text()
        assert f"acd_nb.{module}" in page
    core = re.sub(r"<[^>]+>", "", (site / "api" / "core.html").read_text())
    assert "offdiag_pairs(n" in core.replace("\n", "")  # signature
    doc = ast.get_docstring(next(f for f in ast.parse((ROOT / "acd_nb" / "core.py").read_text()).body
                                 if getattr(f, "name", "") == "offdiag_pairs"))
    assert html.escape(doc.split("\n")[0][:40], quote=False) in (site / "api" / "core.html").read_text()
    assert (site / "search" / "search_index.json").exists()


def test_module_docstring_links_resolve(site):
    "Each module's docstring ends with nbdev's `Docs: <site>/<page>.html.md` link; that page is on the site."
    for module in MODULES:
        doc = ast.get_docstring(ast.parse((ROOT / "acd_nb" / f"{module}.py").read_text())) or ""
        links = re.findall(r"Docs: (\S+)", doc)
        assert links, f"acd_nb.{module} has no Docs link"
        page = site / links[-1].rsplit("/", 1)[1]
        assert page.is_file() and page.stat().st_size > 500, f"acd_nb.{module} links to {page.name}, which the site lacks"


# Debian's chromium (.ci/run installs it), or the Chrome that GitHub's Ubuntu runners carry
BROWSER = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)


def screenshot(page, png, tmp_path):
    "Render a page with headless Chromium to a PNG; returns it as a grey-level array."
    subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                    "--no-first-run", f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1280,1600",
                    "--virtual-time-budget=5000", f"--screenshot={png}", page.as_uri()],
                   check=True, timeout=120, capture_output=True)
    return np.asarray(Image.open(png).convert("L"), dtype=float)


@pytest.mark.skipif(BROWSER is None,
                    reason="no headless Chromium or Chrome (Debian: apt-get install -y chromium; .ci/run installs it)")
@pytest.mark.parametrize("name", ["index", "exp_particles"])
def test_chromium_renders_page_not_blank(site, name, tmp_path):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    png = SCREENSHOTS / f"{name}.png"
    grey = screenshot(site / f"{name}.html", png, tmp_path)
    assert grey.shape == (1600, 1280)
    assert grey.std() > 20, f"{png}: nearly uniform image (std {grey.std():.1f})"
    assert (grey < 128).mean() > 0.01, f"{png}: almost no dark pixels (no text rendered)"
    assert (grey > 250).mean() < 0.99, f"{png}: all white"


@pytest.mark.skipif(BROWSER is None,
                    reason="no headless Chromium or Chrome (Debian: apt-get install -y chromium; .ci/run installs it)")
def test_math_is_typeset_offline(site, tmp_path):
    "The model page's ELBO and tau are typeset by the MathJax copied into the site: no raw `$$` left, nothing fetched."
    assert (site / "assets" / "mathjax" / "MathJax.js").exists()
    page = (site / "13_model.html").read_text()
    assert not re.search(r"https?://[^\"']*mathjax", page, re.I) and 'src="assets/mathjax/MathJax.js' in page
    dom = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                          f"--user-data-dir={tmp_path / 'chromium-profile'}", "--virtual-time-budget=15000", "--dump-dom",
                          (site / "13_model.html").as_uri()], check=True, timeout=120, capture_output=True, text=True).stdout
    assert len(re.findall(r'class="MathJax', dom)) > 10, "MathJax did not typeset the page"
    text = re.sub(r"<[^>]+>", " ", re.sub(r"<(script|style)\b.*?</\1>", "", dom, flags=re.S))
    assert "$$" not in html.unescape(text), "raw $$ left on the page"


def probe(site, name, script, tmp_path, width=1300):
    """Run `script` (JavaScript setting `window.probe`) in a page at `width` px in headless Chromium; returns window.probe

    The page is copied beside the original (same assets) with the script added; Chromium dumps the DOM, where
    the script left its result as JSON in the body's data-probe attribute."""
    page = (site / f"{name}.html").read_text()
    run = ("<script>window.addEventListener('load', () => { " + script +
           "; document.body.setAttribute('data-probe', JSON.stringify(window.probe)); });</script>")
    copy = site / f"_probe_{name}.html"
    copy.write_text(page.replace("</body>", run + "</body>"))
    dom = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                          f"--user-data-dir={tmp_path / 'chromium-profile'}", f"--window-size={width},1000",
                          "--virtual-time-budget=5000", "--dump-dom", copy.as_uri()],
                         check=True, timeout=120, capture_output=True, text=True).stdout
    copy.unlink()
    found = re.search(r'data-probe="([^"]*)"', dom)
    assert found, f"{name}: the probe did not run"
    return json.loads(html.unescape(found.group(1)))


def first_screen(site, name, tmp_path):
    "Screenshot of the first 1300 x 1000 px of a page, kept in _docs_build/screenshots/ (what a reader sees first)."
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    png = SCREENSHOTS / f"{name}_1300.png"
    subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                    "--no-first-run", f"--user-data-dir={tmp_path / 'chromium-shot'}", "--window-size=1300,1000",
                    "--virtual-time-budget=5000", f"--screenshot={png}", (site / f"{name}.html").as_uri()],
                   check=True, timeout=120, capture_output=True)
    return png


@pytest.mark.skipif(BROWSER is None,
                    reason="no headless Chromium or Chrome (Debian: apt-get install -y chromium; .ci/run installs it)")
def test_results_table_fits_the_page_at_1300px(site, tmp_path):
    "The short claims table is as wide as the page at most: no column cut off at the right, nothing to scroll sideways."
    got = probe(site, "results", """
        const table = document.querySelector('article table'), content = document.querySelector('.md-content');
        window.probe = {content: content.getBoundingClientRect().right,
                        right: Math.max(...[table, ...table.querySelectorAll('td, th, a')].map(e => e.getBoundingClientRect().right)),
                        scrolls: [table, table.parentElement, table.parentElement.parentElement].some(e => e.scrollWidth > e.clientWidth + 1)}""",
        tmp_path)
    assert not got["scrolls"] and got["right"] <= got["content"] + 1, got
    first_screen(site, "results", tmp_path)


@pytest.mark.skipif(BROWSER is None,
                    reason="no headless Chromium or Chrome (Debian: apt-get install -y chromium; .ci/run installs it)")
def test_report_page_shows_its_claims_before_its_code(site, tmp_path):
    "A report's page opens with its claims: the first claim's id lies above the first code cell's input."
    reports = sorted(ROOT.glob("reports/cpu/*/results.json"))
    if not reports: pytest.skip("no committed cpu report")
    report = next((r for r in reports if r.parent.name == "exp_kuramoto"), reports[0])
    name = build_docs.report_page("cpu", report.parent.name).replace(".ipynb", "")
    claim = json.loads(report.read_text())["claims"][0]["id"]
    got = probe(site, name, f"""
        const claim = [...document.querySelectorAll('article code')].find(c => c.textContent === {json.dumps(claim)});
        const code = document.querySelector('article .jp-CodeCell .jp-InputArea');
        window.probe = {{claim: claim ? claim.getBoundingClientRect().top : null, code: code.getBoundingClientRect().top}}""",
        tmp_path)
    assert got["claim"] is not None and got["claim"] < got["code"], got
    first_screen(site, name, tmp_path)
