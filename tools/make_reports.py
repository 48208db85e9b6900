"""Build the committed reports: run experiment notebooks at `cpu` (or `paper`) scale into reports/<scale>/<experiment>/.

Each experiment runs through papermill with the parameters of `REPORTS` (one torch thread per notebook,
`--jobs` notebooks side by side). Its models are trained in the work folder `_reports/<scale>/<experiment>/`
(git-ignored), where their run folders stay: a rerun reuses every model whose training budget is spent and
resumes the others from their last checkpoint, so a long report can be built across several sessions.
When a notebook finishes, its executed copy (no progress bars, which an interactive run keeps; no machine paths),
`results.json` and PNG figures replace `reports/<scale>/<experiment>/` in one step (a hand-written `README.md` there,
e.g. how the fits were made, is kept); a notebook that fails leaves the committed report as it was and its partial
copy in the work folder.

usage: python tools/make_reports.py [--scale cpu] [--jobs 2] [experiment ...]    (what `make reports` runs)
       python tools/make_reports.py --publish EXECUTED.ipynb --scale gpu experiment  (a notebook run elsewhere, or by papermill)
"""
import argparse
import os
import re
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from build_docs import _TQDM_WARNING, without_machine_paths  # noqa: E402

# the paper's claims need at least 3 seeds (5 for Netsim, as its Table 2)
SEEDS = {"exp_netsim": [0, 1, 2, 3, 4]}
EXPERIMENTS = ["exp_kuramoto", "exp_particles", "exp_netsim", "exp_training_size", "exp_noise", "exp_temperature",
               "exp_unobserved", "exp_unobserved_uninfluenced", "exp_baselines", "exp_missing", "exp_own_data",
               "exp_general"]
# a report named otherwise than its notebook runs that notebook with these parameters
VARIANTS = {"exp_unobserved_uninfluenced": {"notebook": "exp_unobserved", "uninfluenced_influencer": True}}
REPORTS = {scale: {name: {"scale": scale, "seeds": SEEDS.get(name, [0, 1, 2]), **VARIANTS.get(name, {})} for name in EXPERIMENTS}
           for scale in ("cpu", "paper")}
CELL_TIMEOUT_S = 4 * 3600  # a training cell holds several 30-minute models
_ANSI = re.compile(r"\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])")
# a tqdm bar's last state, e.g. "train: 100%|██████████| 100/100 [00:00<?, ?epoch/s]"
_PROGRESS_BAR = re.compile(r"^.*\d+%\|.*\| *[\d.]+[kMG]?/[\d.]+[kMG]? \[.*\] *(?:\n|$)", re.MULTILINE)


def collapse_progress(text: str) -> str:
    "Stream text as a terminal shows it: each line keeps only what follows its last carriage return."
    return "\n".join(line.rsplit("\r", 1)[-1] for line in _ANSI.sub("", text).split("\n"))


def shown_paths(text: str, work: Path, shown: str) -> str:
    "`text` with the work folder shown as `shown` and no other machine paths"
    return without_machine_paths(text.replace(str(work.resolve()), shown).replace(str(work), shown))


def without_progress(text: str) -> str:
    "Stderr text without finished progress bars and tqdm's ipywidgets warning: what the reader of a report needs of it"
    text = _PROGRESS_BAR.sub("", _TQDM_WARNING.sub("", collapse_progress(text)))
    return text.lstrip("\n") if text.strip() else ""


def clean_report(nb, work: Path, shown: str):
    """An executed notebook as committed: no progress bars on stderr (the others collapsed to their last state); the work
    folder shown as `shown`, no machine paths. A stream left empty goes: the page shows no empty stderr box."""
    for cell in nb.cells:
        if cell.cell_type != "code": continue
        for out in cell.outputs:
            if out.output_type == "stream":
                out.text = without_progress(out.text) if out.name == "stderr" else collapse_progress(out.text)
        cell.outputs = [o for o in cell.outputs if o.output_type != "stream" or o.text]
    return nbformat.reads(shown_paths(nbformat.writes(nb), work, shown), as_version=4)


def build_report(name: str, scale: str, reports_root: Path, work_root: Path) -> float:
    "Run one experiment into its work folder, then publish notebook, results and figures as its report."
    import papermill as pm
    work = work_root / scale / name
    work.mkdir(parents=True, exist_ok=True)
    partial = work / f"{name}.partial.ipynb"
    params = {**REPORTS[scale][name], "out_dir": str(work), "threads": 1}
    notebook = params.pop("notebook", name)
    start = time.perf_counter()
    pm.execute_notebook(str(ROOT / "nbs" / f"{notebook}.ipynb"), str(partial), parameters=params, kernel_name="python3",
                        cwd=str(ROOT / "nbs"), execution_timeout=CELL_TIMEOUT_S, progress_bar=False)
    seconds = time.perf_counter() - start
    publish(partial, name, scale, reports_root, notebook, params, seconds)
    partial.unlink()
    return seconds


def publish(executed: Path, name: str, scale: str, reports_root: Path, notebook: str, params: dict, seconds: float):
    """Publish an executed notebook, with the `results.json` and PNG figures of its `out_dir`, as `reports_root/scale/name/`

    The report folder's hand-written `README.md`, if any, moves into the new one."""
    from acd_nb.core import atomic_folder
    work, shown = Path(params["out_dir"]), f"_reports/{scale}/{name}"
    notes = reports_root / scale / name / "README.md"
    nb = clean_report(nbformat.read(executed, as_version=4), work, shown)
    nb.metadata["acd_report"] = {"scale": scale, "notebook": f"nbs/{notebook}.ipynb", "seconds": round(seconds),
                                 "parameters": {**params, "out_dir": shown}}
    with atomic_folder(reports_root / scale / name) as tmp:
        nbformat.write(nb, tmp / f"{name}.ipynb")
        (tmp / "results.json").write_text(shown_paths((work / "results.json").read_text(), work, shown))
        for path in sorted(work.glob("*.png")): shutil.copy2(path, tmp / path.name)
        if notes.exists(): shutil.copy2(notes, tmp / notes.name)


def publish_executed(executed: Path, name: str, scale: str, reports_root: Path):
    """Publish a notebook run by `tools/train_parallel.py --execute` (e.g. on a GPU machine) or by papermill (e.g. its
    models trained elsewhere, evaluated here); its parameters are in its metadata."""
    metadata = nbformat.read(executed, as_version=4).metadata
    meta, papermill = metadata.get("acd_execute"), metadata.get("papermill", {})
    if meta is None and papermill.get("duration") is not None:  # None: papermill stopped before the end
        meta = {"parameters": papermill["parameters"], "seconds": round(papermill["duration"])}
    if not meta: raise SystemExit(f"{executed} was not run to its end by tools/train_parallel.py --execute or papermill "
                                  "(no acd_execute metadata, no papermill duration)")
    params = {**meta["parameters"], "out_dir": str(executed.resolve().parent)}
    notebook = VARIANTS.get(name, {}).get("notebook", name)
    publish(executed, name, scale, reports_root, notebook, params, meta["seconds"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("experiments", nargs="*", help=f"notebook stems (default: all of {EXPERIMENTS})")
    ap.add_argument("--scale", default="cpu", help=f"{sorted(REPORTS)} to run; any folder name to --publish (default cpu)")
    ap.add_argument("--jobs", type=int, default=2, help="notebooks run side by side, one torch thread each (default 2)")
    ap.add_argument("--reports", type=Path, default=ROOT / "reports", help="where reports are published (default reports/)")
    ap.add_argument("--work", type=Path, default=ROOT / "_reports", help="run folders and partial notebooks (default _reports/)")
    ap.add_argument("--publish", type=Path, metavar="NOTEBOOK",
                    help="only publish this executed notebook (tools/train_parallel.py --execute, or papermill) as the one "
                         "experiment named")
    args = ap.parse_args(argv)
    if args.publish:
        if len(args.experiments) != 1: ap.error("--publish needs the report's name, e.g. exp_unobserved")
        return publish_executed(args.publish, args.experiments[0], args.scale, args.reports)
    if args.scale not in REPORTS: ap.error(f"unknown scale {args.scale!r}; choose from {sorted(REPORTS)}")
    names = args.experiments or EXPERIMENTS
    unknown = [n for n in names if n not in REPORTS[args.scale]]
    if unknown: ap.error(f"unknown experiment(s) {unknown}; choose from {EXPERIMENTS}")
    os.environ["OMP_NUM_THREADS"] = "1"  # oversubscribed cores slow torch down ~100x
    failures = []
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        jobs = {pool.submit(build_report, n, args.scale, args.reports, args.work): n for n in names}
        for job in as_completed(jobs):
            try: print(f"{jobs[job]}: report written in {job.result() / 60:.0f} min", flush=True)
            except Exception as e:
                failures.append(jobs[job])
                print(f"{jobs[job]}: FAILED, committed report left as it was\n{e}", file=sys.stderr, flush=True)
    if failures: raise SystemExit(f"failed: {failures} (partial notebooks in {args.work / args.scale})")


if __name__ == "__main__":
    main()
