"""Build the documentation site offline: execute every notebook once, then render them with MkDocs.

`nbdev-docs` needs Quarto, which cannot be installed here, so this script does what nbdev's docs
processors do and hands the notebooks to mkdocs-jupyter; mkdocstrings adds an API reference page per
`acd_nb` module. One pipeline for `make docs`, the tests and the GitHub Pages workflow:

1. execute: every `nbs/*.ipynb` runs once through papermill (one torch thread per kernel, `--workers`
   kernels at a time), with a `show_doc` cell after each exported definition as nbdev adds them.
   Experiment notebooks (`exp_*`) run at `scale="ci"` (the command of each one's introduction, `DOCS_COMMANDS`),
   their results and figures written under the build folder. Datasets are cached in
   `<build>/acd_data/<library hash>` (`ACD_DATA_DIR`), never in the user's cache; `ACD_NETSIM_DIR` is
   left as it is. Executed copies stay in `<build>/executed/`, keyed by a hash of the notebook, the `acd_nb` sources
   and the parameters: an unchanged notebook is not run again. Nothing is written into `nbs/`. The test suite fills
   the same cache: `tests/test_notebooks.py` executes each library notebook with `execute_for_docs`, and an
   experiment test that runs a notebook with its page's parameters hands the executed copy over with
   `keep_executed`, so `make test` runs no notebook twice for the same result.
2. process: as nbdev's docs do, cells marked `#| hide` and the sources of `#| export` cells are left
   out (their `show_doc` output documents them), `#|` lines are removed, `#| echo: false` hides a
   cell's input and `#| output: false` its output.
3. reports: a Results page with the short table of the paper's claims as the committed reports state them and the
   figure of each claim's number beside the paper's (`acd_nb.reports.results_markdown`, `plot_claims`), one page per
   committed report (`reports/<scale>/<experiment>/`: its claims and figures first, then the executed notebook as run
   at that scale), and on each experiment's page a link to its report.
4. render: `mkdocs build` with `mkdocs.yml`, pages from `<build>/src`, site into `--site-dir`; MathJax is copied
   from the `jupyter-server-mathjax` package into the site, so formulas are typeset offline. The pages mkdocs-jupyter
   converts are rendered first in `--workers` processes into its cache (`<build>/rendered`, `render_pages`).

usage: python tools/build_docs.py [--site-dir _site] [--build-dir _docs_build] [--workers 2] [--only NAME ...]
"""
import argparse
import ast
import hashlib
import json
import logging
import os
import re
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"
# bump when the execution step changes in a way that makes cached executed notebooks stale
EXECUTE_FORMAT = 2
DOCS_BUILD = ROOT / "_docs_build"
EXPERIMENT_PARAMETERS = {"scale": "ci"}
# Each experiment's page runs the `ci` command its introduction shows (papermill's command line at the default scale);
# the experiment's test (`run_example` in tests/test_experiments.py) runs that very command, so the test's executed copy is the page
# (`keep_executed`) and `make test` runs it once.
DOCS_COMMANDS = {name: f"papermill nbs/{name}.ipynb _reports/{name}.ipynb {options}".strip() for name, options in {
    "exp_baselines": "",
    "exp_datasets": '-p sigma 0.1 -y "systems: [kuramoto, springs]"',
    "exp_general": "-p n_samples 4",
    "exp_granger": '-p n_graphs 3 -y "prediction_steps: [1, 3]"',
    "exp_kuramoto": "-p baselines linear_granger,mi,te -p n_baseline_samples 32 -p tta_steps 5",
    "exp_missing": "-p baselines linear_granger,mi",
    "exp_netsim": "-p tta_lr 0.02 -p tta_steps 50",
    "exp_noise": "-p sigma 0.1",
    "exp_own_data": "",
    "exp_particles": "-p methods enc+tta -p tta_steps 30",
    "exp_pretrained": '-p systems kuramoto -y "observables: {kuramoto: [1]}"',
    "exp_temperature": '-p alpha 2.0 -p oracle_seed 1 -y "{methods: [latent, none], seeds: [1]}"',
    "exp_training_size": '-p systems springs -y "train_sizes: [256, 32]"',
    "exp_unobserved": '-y "preset_overrides: {epochs: 30}"',
}.items()}
CELL_TIMEOUT_S = 600
REMOVE_INPUT = "remove_input"  # cell tag; mkdocs.yml hands it to nbconvert's TagRemovePreprocessor
_ANSI = re.compile(r"\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])")
# tqdm.auto's complaint that ipywidgets is absent (its text progress bars are what the pages should show anyway)
_TQDM_WARNING = re.compile(r"^.*TqdmWarning: IProgress not found.*\n(?:\s+from \.autonotebook import .*\n?)?", re.MULTILINE)
_QUARTO_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)\{([^}]*)\}")


def directives(source: str) -> dict:
    "nbdev/Quarto `#|` directives of a code cell: `#| hide` -> {'hide': ''}, `#| echo: false` -> {'echo': 'false'}."
    found = {}
    for line in source.splitlines():
        m = re.match(r"\s*#\|\s*([\w-]+)\s*:?\s*(.*?)\s*$", line)
        if m: found[m.group(1)] = m.group(2)
    return found


def strip_directives(source: str) -> str:
    "Source without `#|` directive lines and without lines ending in `#| hide_line`."
    lines = [l for l in source.splitlines() if not re.match(r"\s*#\|", l) and not re.search(r"#\|\s*hide_line\s*$", l)]
    return "\n".join(lines).strip()


def notebook_title(nb) -> str:
    "Text of the notebook's first `# heading` (the page title)."
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+?)\s*$", cell.source, re.MULTILINE)
            if m: return m.group(1)
    raise ValueError("notebook has no `# title` markdown cell")


def notebook_names(only=None) -> list[str]:
    "Notebook stems in reading order: index, the numbered library notebooks, then the experiments."
    names = sorted(p.stem for p in NBS.glob("*.ipynb"))
    order = sorted(names, key=lambda n: (n != "index", n.startswith("exp_"), n))
    if only:
        unknown = set(only) - set(names)
        if unknown: raise ValueError(f"no such notebook(s) in nbs/: {sorted(unknown)}")
        order = [n for n in order if n in only]
    return order


def _shown_docs(nb) -> set[str]:
    "Names already passed to an explicit `show_doc(...)` call."
    return set(re.findall(r"^show_doc\(\s*([\w.]+)", "\n".join(c.source for c in nb.cells if c.cell_type == "code"), re.MULTILINE))


def add_show_docs(nb):
    "After each `#| export(s)` cell, one `show_doc(name)` cell per public def/class it defines (input hidden in the docs)."
    shown, cells = _shown_docs(nb), []
    for cell in nb.cells:
        cells.append(cell)
        d = directives(cell.source) if cell.cell_type == "code" else {}
        if not ({"export", "exports"} & d.keys()) or "hide" in d: continue
        tree = ast.parse(strip_directives(cell.source))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_") and node.name not in shown:
                cells.append(nbformat.v4.new_code_cell(f"show_doc({node.name})", metadata={"tags": [REMOVE_INPUT]}))
    if len(cells) > len(nb.cells):
        cells.insert(0, nbformat.v4.new_code_cell("from nbdev.showdoc import show_doc", metadata={"tags": ["remove_cell"]}))
    nb.cells = cells
    return nb


def _sources_digest() -> str:
    "Hash of the package sources: an executed notebook is stale once the library changes."
    h = hashlib.sha256()
    for p in sorted((ROOT / "acd_nb").glob("*.py")):
        h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()


def execution_key(name: str, params: dict, library_digest: str) -> str:
    "What an executed copy depends on: this script's execution format, the notebook, its parameters and the library."
    h = hashlib.sha256(json.dumps([EXECUTE_FORMAT, name, params, library_digest], sort_keys=True).encode())
    h.update((NBS / f"{name}.ipynb").read_bytes())
    return h.hexdigest()


def command_parameters(command: str) -> dict:
    "The parameters `papermill IN OUT [-p name value] [-y yaml]` passes, read as papermill's command line reads them."
    import shlex
    import yaml
    from papermill.cli import _resolve_type, papermill
    from papermill.iorw import NoDatesSafeLoader
    words = shlex.split(command)
    if words[:1] != ["papermill"]: raise ValueError(f"not a papermill command: {command!r}")
    options = papermill.make_context("papermill", words[1:]).params
    found = {}
    for text in options["parameters_yaml"]: found.update(yaml.load(text, Loader=NoDatesSafeLoader) or {})
    for name, value in options["parameters"]: found[name] = _resolve_type(value)
    return found


def docs_parameters(name: str) -> dict:
    "The parameters a notebook's page runs with (experiments: `EXPERIMENT_PARAMETERS` and `DOCS_COMMANDS`), out_dir aside."
    return {**EXPERIMENT_PARAMETERS, **command_parameters(DOCS_COMMANDS[name])} if name.startswith("exp_") else {}


def _relocated(nb, out_dir: str | None, name: str, root: Path | None = None):
    "`nb` with its run's out_dir shown as the notebook's default `_reports/<name>` and `root` (its working folder) removed."
    swaps = ([(str(out_dir), f"_reports/{name}")] if out_dir else []) + ([(f"{root}{os.sep}", "")] if root else [])
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        for out in cell.outputs:
            for field, kind in [("text", None), *(("data", k) for k in ("text/plain", "text/html", "text/markdown"))]:
                holder = out if kind is None else out.get("data", {})
                key = field if kind is None else kind
                if isinstance(holder.get(key), str):
                    for old, new in swaps: holder[key] = holder[key].replace(old, new)
    return nb


def _cached_key(path: Path) -> str | None:
    return nbformat.read(path, as_version=4).metadata.get("acd_docs", {}).get("key") if path.exists() else None


def _write_executed(nb, path: Path, **record):
    "Write an executed copy with its `acd_docs` record, atomically (a half-written copy is never taken for a cached one)."
    nb.metadata["acd_docs"] = record
    partial = path.with_suffix(".partial.ipynb")
    nbformat.write(nb, partial)
    partial.replace(path)


def _execute(name: str, params: dict, key: str, out_path: str) -> float:
    "Run one notebook (in a worker process); the executed copy is written to out_path only on success."
    import papermill as pm
    nb = add_show_docs(nbformat.read(NBS / f"{name}.ipynb", as_version=4))
    partial = Path(out_path).with_suffix(".partial.ipynb")
    if "out_dir" in params:  # experiments resume from checkpoints in out_dir: start afresh, as the key says it must
        shutil.rmtree(params["out_dir"], ignore_errors=True)
    start = time.perf_counter()
    pm.execute_notebook(nb, str(partial), parameters=params, kernel_name="python3", cwd=str(NBS),
                        execution_timeout=CELL_TIMEOUT_S, progress_bar=False)
    seconds = time.perf_counter() - start
    done = _relocated(nbformat.read(partial, as_version=4), params.get("out_dir"), name)
    _write_executed(done, Path(out_path), key=key, seconds=round(seconds, 1), parameters=docs_parameters(name))
    return seconds


def keep_executed(name: str, executed_path, root: Path | None = None, build: Path = DOCS_BUILD) -> bool:
    """Keep a notebook that a test ran through papermill as its docs page's executed copy, if it ran as the page runs

    True when `executed_path` ran `nbs/<name>.ipynb` with `docs_parameters(name)` (whatever its out_dir), without an
    error, on the current library, and the page needs no cell the test's copy lacks (`add_show_docs`); the first such
    copy is kept. `root`: the folder it ran in, removed from the paths its outputs show."""
    nb = nbformat.read(executed_path, as_version=4)
    ran = dict(nb.metadata.get("papermill", {}).get("parameters", {}))
    out_dir = ran.pop("out_dir", None)
    if name.startswith("exp_"): ran = {**EXPERIMENT_PARAMETERS, **ran}
    page = docs_parameters(name)
    source = nbformat.read(NBS / f"{name}.ipynb", as_version=4)
    if (json.dumps(ran, sort_keys=True) != json.dumps(page, sort_keys=True)
            or len(add_show_docs(source).cells) != len(source.cells)
            or any(out.output_type == "error" for c in nb.cells for out in c.get("outputs", []))):
        return False
    key, path = execution_key(name, page, _sources_digest()), build / "executed" / f"{name}.ipynb"
    if _cached_key(path) == key: return True
    path.parent.mkdir(parents=True, exist_ok=True)
    seconds = nb.metadata.get("papermill", {}).get("duration")
    _write_executed(_relocated(nb, out_dir, name, root), path, key=key, parameters=page,
                    seconds=round(seconds, 1) if seconds else None)
    return True


def docs_environment(build: Path, digest: str) -> dict[str, str]:
    """What the notebooks' kernels see: one torch thread, datasets cached per library version under build, `acd` on PATH,
    and torch.compile's kernels cached under build too: with the machine's shared cache (/tmp/torchinductor_<user>),
    after other programs had compiled there (a test run under ATEN_CPU_CAPABILITY=avx2, compile experiments),
    14_train's compiled-stack cell crashed its kernel every time ("malloc(): unaligned tcache chunk detected"); with
    a cache of its own it passed."""
    return {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),  # oversubscribed cores slow torch down ~100x
            "ACD_DATA_DIR": str(build.resolve() / "acd_data" / digest[:16]),
            "TORCHINDUCTOR_CACHE_DIR": str(build.resolve() / "torchinductor"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def execute_for_docs(name: str, build: Path = DOCS_BUILD) -> Path:
    "Execute one notebook as the docs build does, into its cache (nothing runs when the cached copy is current)."
    from unittest.mock import patch
    digest = _sources_digest()
    with patch.dict(os.environ, docs_environment(build, digest)):  # put back as it was afterwards
        return execute_all([name], build.resolve(), 1, digest)[name]


def execute_all(names: list[str], build: Path, workers: int, digest: str) -> dict[str, Path]:
    "Executed copies of `names` under build/executed, reusing those whose inputs (see `execution_key`) did not change."
    executed = build / "executed"
    executed.mkdir(parents=True, exist_ok=True)
    todo, paths = [], {}
    for name in names:
        params = {**docs_parameters(name), "out_dir": str(build / "reports" / name)} if name.startswith("exp_") else {}
        key, path = execution_key(name, docs_parameters(name), digest), executed / f"{name}.ipynb"
        paths[name] = path
        if _cached_key(path) != key: todo.append((name, params, key, str(path)))
    print(f"executing {len(todo)} of {len(names)} notebooks ({len(names) - len(todo)} unchanged since their last run)", flush=True)
    # the experiments take longest: start them first so both workers stay busy to the end
    todo.sort(key=lambda job: not job[0].startswith("exp_"))
    failures = []
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        jobs = {pool.submit(_execute, *job): job[0] for job in todo}
        for job in as_completed(jobs):
            name = jobs[job]
            try: print(f"  {name}: {job.result():.0f} s", flush=True)
            except Exception as e:
                failures.append(name)
                print(f"  {name}: FAILED\n{e}", file=sys.stderr, flush=True)
    if failures:
        raise SystemExit(f"notebook execution failed: {failures} (executed copies with the error: {executed}/<name>.partial.ipynb)")
    return paths


def without_machine_paths(text: str, root: Path = ROOT) -> str:
    """`text` with the checkout's absolute path made relative: a published page must not show the build machine's folders

    The Python environment (e.g. warnings from site-packages) is shown by its folder's name, wherever it lives."""
    env = Path(sys.prefix)
    text = text.replace(f"{env}{os.sep}", f"{env.name}{os.sep}")
    return text.replace(f"{root}{os.sep}", "").replace(str(root), ".")


def process_for_docs(nb):
    "nbdev's docs rules on an executed notebook (see the module docstring); returns the page's notebook."
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            # the README's links into docs/ (e.g. docs/images/...): the site serves docs/ at its root
            cell.source = cell.source.replace("](docs/", "](")
            cells.append(cell)
            continue
        # nbclient's timings: never shown, and some nbclient versions write `total` as a number, which nbconvert refuses
        cell.metadata.pop("execution", None)
        d, tags = directives(cell.source), set(cell.metadata.get("tags", []))
        if "hide" in d or d.get("include") == "false" or "remove_cell" in tags: continue
        cell.source = strip_directives(cell.source)
        if "injected-parameters" in tags:  # papermill's: show the parameters this page ran with, not the build paths
            cell.source = "# parameters of this page's run\n" + "\n".join(l for l in cell.source.splitlines()[1:] if not l.startswith("out_dir"))
        if {"export", "exporti", "default_exp"} & d.keys() or d.get("echo") == "false" or re.match(r"show_doc\(", cell.source):
            tags.add(REMOVE_INPUT)
            cell.metadata["tags"] = sorted(tags)
        if d.get("output") == "false": cell.outputs = []
        for out in cell.outputs:
            if out.output_type == "stream": out.text = without_machine_paths(_TQDM_WARNING.sub("", _ANSI.sub("", out.text)))
            for kind in ("text/plain", "text/html", "text/markdown"):
                if kind in out.get("data", {}): out.data[kind] = without_machine_paths(out.data[kind])
            if "text/markdown" in out.get("data", {}):  # show_doc's `[source](url){attrs}` is Quarto syntax: make it HTML
                out.data["text/markdown"] = _QUARTO_LINK.sub(r'<a href="\2" \3>\1</a>', out.data["text/markdown"])
        cell.outputs = [o for o in cell.outputs if o.output_type != "stream" or o.text.strip()]
        if (REMOVE_INPUT in tags or not cell.source) and not cell.outputs: continue
        cells.append(cell)
    nb.cells = cells
    return nb


def report_page(scale: str, experiment: str) -> str:
    "File name of the docs page of the committed report `reports/<scale>/<experiment>/`."
    return f"report_{scale}_{experiment}.ipynb"


CLAIMS_FIGURE = "images/claims.png"  # the Results page's figure; the README shows the same, from docs/


def claims_figure_png(reports: list[dict]) -> bytes | None:
    "`acd_nb.reports.plot_claims` of `reports` as PNG bytes (None when no claim has a point)."
    import io
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from acd_nb.reports import plot_claims
    figure = plot_claims(reports)
    if figure is None: return None
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    return buffer.getvalue()


def report_figures(folder: Path) -> list[Path]:
    "A report's PNG figures for the top of its page: its results first, the learning curves (the evidence) last."
    return sorted(folder.glob("*.png"), key=lambda p: (p.stem.startswith("learning_curves"), p.name))


def report_header(rep: dict, figures: list[str]) -> str:
    "The cell that opens a report's page: its claims, what each tests, its figures (`figures`: addresses), then a pointer."
    from acd_nb.reports import report_header_markdown
    images = "".join(f'<a href="{f}"><img src="{f}" alt="{Path(f).stem}"></a>' for f in figures)
    return (report_header_markdown(rep) + (f'\n\n<div class="acd-report-figures">{images}</div>' if images else "")
            + "\n\n*Below: the experiment as it ran, its introduction first (all claims: [Results](results.html)).*")


def report_pages(src: Path, reports: list[dict]) -> list[str]:
    """Write each committed report's notebook as a page and the Results page

    A report's page is titled as a report of its scale and opens with its claims and figures (`report_header`)."""
    from acd_nb.reports import results_markdown
    from make_reports import EXPERIMENTS
    pages = []
    for rep in reports:
        path = rep["path"].parent / f"{rep['experiment']}.ipynb"
        if not path.exists(): continue
        page = report_page(rep["scale"], rep["experiment"])
        nb = process_for_docs(nbformat.read(path, as_version=4))
        at = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown")
        title, _, intro = nb.cells[at].source.partition("\n")
        nb.cells[at].source = re.sub(r"^#\s+(?:Experiment:\s*)?(.+)$", rf"# Report ({rep['scale']}): \1", title)
        figures = []
        for png in report_figures(path.parent):
            figures.append(f"{Path(page).stem}/{png.name}")
            (src / figures[-1]).parent.mkdir(exist_ok=True)
            shutil.copy2(png, src / figures[-1])
        header = nbformat.v4.new_markdown_cell(report_header(rep, figures))
        nb.cells[at + 1:at + 1] = [header] + ([nbformat.v4.new_markdown_cell(intro.strip())] if intro.strip() else [])
        nbformat.write(nb, src / page)
        pages.append(page)
    link = lambda scale, experiment: report_page(scale, experiment).replace(".ipynb", ".html")
    figure = claims_figure_png(reports)
    if figure is not None:
        (src / CLAIMS_FIGURE).parent.mkdir(parents=True, exist_ok=True)
        (src / CLAIMS_FIGURE).write_bytes(figure)
    (src / "results.md").write_text("# Results\n\nThe paper's claims as the committed reports state them "
                                    "(`reports/<scale>/<experiment>/results.json`, rebuilt by `make reports`): the "
                                    "paper's own claims in its order, then the baselines' checks against their papers; "
                                    "each row links to the executed report with its figures.\n\n"
                                    '<div class="acd-claims" markdown="1">\n\n'  # docs/stylesheets/extra.css: compact rows
                                    + results_markdown(reports, EXPERIMENTS, link=link,
                                                       figure=CLAIMS_FIGURE if figure is not None else None)
                                    + "\n\n</div>\n")
    return pages


def link_reports(nb, experiment: str, reports: list[dict]):
    "Below an experiment page's title: a note linking to its committed reports, with how many of their claims hold."
    lines = []
    for rep in (r for r in reports if r["experiment"] == experiment):
        claims = rep["results"].get("claims", [])
        page = report_page(rep["scale"], experiment).replace(".ipynb", ".html")
        lines.append(f"[the committed `{rep['scale']}` report]({page}) ({sum(c['holds'] for c in claims)} of "
                     f"{len(claims)} claims hold; see [Results](results.html))")
    if lines:
        note = nbformat.v4.new_markdown_cell("> **Results at full scale.** This page ran at `ci` scale, where the numbers "
                                             "only show that the pipeline runs. See " + "; ".join(lines) + ".")
        nb.cells.insert(1, note)
    return nb


def modules() -> list[str]:
    "Public `acd_nb` modules in the notebooks' reading order (their `#| default_exp`), then any others."
    public = {p.stem for p in (ROOT / "acd_nb").glob("*.py") if not p.stem.startswith("_")}
    ordered = []
    for name in notebook_names():
        code = "\n".join(c.source for c in nbformat.read(NBS / f"{name}.ipynb", as_version=4).cells if c.cell_type == "code")
        m = re.search(r"^#\|\s*default_exp\s+(\S+)", code, re.MULTILINE)
        if m and m.group(1) in public and m.group(1) not in ordered: ordered.append(m.group(1))
    return ordered + sorted(public - set(ordered))


def api_pages(src: Path) -> list[str]:
    "One mkdocstrings page per public `acd_nb` module; returns their paths relative to src."
    (src / "api").mkdir(parents=True, exist_ok=True)
    pages = []
    for module in modules():
        page = f"api/{module}.md"
        (src / page).write_text(f"# acd_nb.{module}\n\n::: acd_nb.{module}\n")
        pages.append(page)
    return pages


def markdown_pages(site_dir: Path, names: list[str]):
    """The `Docs:` link nbdev writes into each module's docstring (`<module>.html.md`, nbdev's name for a page as
    markdown): the library notebook's markdown and code cells, so the link resolves on this site too."""
    from nbdev.config import nbpath2docurl
    for name in names:
        url = nbpath2docurl(NBS / f"{name}.ipynb")
        if not url or name == "index" or name.startswith("exp_"): continue
        nb = nbformat.read(NBS / f"{name}.ipynb", as_version=4)
        parts = [c.source if c.cell_type == "markdown" else f"```python\n{c.source}\n```" for c in nb.cells
                 if c.source.strip() and "hide" not in directives(c.source)]
        (site_dir / url.rsplit("/", 1)[1]).write_text("\n\n".join(parts) + "\n")


def _render_page(path: str, options: dict, toc_depth: int, cache_file: str):
    "One page as mkdocs-jupyter renders it (its HTML, table of contents and title), written to its cache file atomically."
    from mkdocs_jupyter import convert
    from mkdocs_jupyter.plugin import _get_nb_toc_tokens
    body = convert.nb2html(path, execute=False, **options)
    toc_tokens, title = _get_nb_toc_tokens(path, toc_depth)
    partial = Path(cache_file).with_suffix(".partial")
    partial.write_text(json.dumps({"content": body, "toc_tokens": toc_tokens, "title": title}), encoding="utf-8")
    partial.replace(cache_file)


def render_pages(cfg, cache_dir: Path, workers: int) -> int:
    """Render the pages mkdocs-jupyter converts (the notebooks) in `workers` processes into its cache `cache_dir`

    `mkdocs build` converts them one after another (about half of the build); with the cache filled under the keys the
    plugin computes, it reads them instead. An unchanged page keeps its cache file, so a rebuild converts only what
    changed. Returns the number of pages rendered; 0, and the plugin converts as before, if mkdocs.yml turns its
    `cache` off or its cache helpers are absent (a later mkdocs-jupyter)."""
    plugin = cfg.plugins["mkdocs-jupyter"]
    plugin.config["cache_dir"] = str(cache_dir)
    if not plugin.config["cache"]: return 0
    try:
        from mkdocs_jupyter.plugin import _compute_cache_key, _get_cache_path, _get_nb_toc_tokens  # noqa: F401
    except ImportError:
        return 0
    keys = ("kernel_name", "theme", "allow_errors", "show_input", "no_input", "no_prompt", "remove_tag_config",
            "highlight_extra_classes", "include_requirejs", "custom_mathjax_url")
    options = {k: plugin.config[k] for k in keys}
    pages = [p for p in Path(cfg.docs_dir).rglob("*") if p.suffix in (".ipynb", ".md") and
             plugin.should_include(argparse.Namespace(abs_src_path=str(p)))]
    todo = [(str(p), cache) for p in pages if not (cache := _get_cache_path(
        cache_dir, _compute_cache_key(str(p), plugin.config, plugin.config["execute"]))).exists()]
    cache_dir.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        for job in [pool.submit(_render_page, path, options, plugin.config["toc_depth"], str(cache)) for path, cache in todo]:
            job.result()
    return len(todo)


def build(site_dir: Path, build: Path, workers: int, only=None) -> dict:
    "Execute, process and render; returns {'pages': {name: title}, 'seconds': {...}}."
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config

    t0 = time.perf_counter()
    build, site_dir = build.resolve(), site_dir.resolve()
    # datasets cached per library version: a changed simulator must not reuse data made by the old one
    digest = _sources_digest()
    data_root = build / "acd_data"
    for stale in (data_root.iterdir() if data_root.is_dir() else []):
        if stale.name != digest[:16]: shutil.rmtree(stale, ignore_errors=True)
    os.environ.update(docs_environment(build, digest))
    names = notebook_names(only)
    executed = execute_all(names, build, workers, digest)
    t_exec = time.perf_counter() - t0

    src = build / "src"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True, exist_ok=True)
    from acd_nb.reports import load_reports
    reports = load_reports(ROOT / "reports")
    titles = {}
    for name in names:
        nb = nbformat.read(executed[name], as_version=4)
        titles[name] = notebook_title(nb)
        nbformat.write(link_reports(process_for_docs(nb), name, reports), src / f"{name}.ipynb")
    import jupyter_server_mathjax  # MathJax ships in this package: the site typesets math without a CDN
    shutil.copytree(Path(jupyter_server_mathjax.__file__).parent / "static", src / "assets" / "mathjax")
    extra = ROOT / "docs"
    if extra.is_dir():
        for p in extra.rglob("*"):
            if p.is_file():
                (src / p.relative_to(extra)).parent.mkdir(parents=True, exist_ok=True)
                (src / p.relative_to(extra)).write_bytes(p.read_bytes())
    reported = report_pages(src, reports)  # after docs/: its copy of the claims figure is the README's, maybe older
    nav = [{"Home": "index.ipynb"}] if "index" in names else []
    library = [f"{n}.ipynb" for n in names if n != "index" and not n.startswith("exp_")]
    experiments = [f"{n}.ipynb" for n in names if n.startswith("exp_")]
    nav += [{"Library": library}] if library else []
    nav += [{"Experiments": experiments}] if experiments else []
    nav += [{"Results": ["results.md", *reported]}]
    nav += [{"API reference": api_pages(src)}]
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s", level=logging.WARNING)
    # nbconvert warns for every figure (matplotlib outputs carry no alt text): noise, once per page
    logging.getLogger("traitlets").addFilter(lambda r: not r.getMessage().startswith("Alternative text is missing"))
    cfg = load_config(str(ROOT / "mkdocs.yml"), docs_dir=str(src), site_dir=str(site_dir), nav=nav)
    render_pages(cfg, build / "rendered", workers)
    mkdocs_build(cfg)
    markdown_pages(site_dir, names)
    seconds = {"execute": round(t_exec, 1), "total": round(time.perf_counter() - t0, 1)}
    print(f"site: {site_dir} ({len(names)} notebook pages); execute {seconds['execute']:.0f} s, total {seconds['total']:.0f} s", flush=True)
    return {"pages": titles, "seconds": seconds}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site-dir", type=Path, default=ROOT / "_site", help="where the HTML site goes (default _site/)")
    ap.add_argument("--build-dir", type=Path, default=DOCS_BUILD,
                    help="executed notebooks, experiment outputs, datasets and page sources (default _docs_build/)")
    ap.add_argument("--workers", type=int, default=2, help="notebooks executed at once (default 2)")
    ap.add_argument("--only", nargs="+", help="build only these notebooks (stems, e.g. index 00_core)")
    args = ap.parse_args(argv)
    build(args.site_dir, args.build_dir, args.workers, args.only)


if __name__ == "__main__":
    main()
