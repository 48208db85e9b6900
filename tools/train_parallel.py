"""Train an experiment notebook's models in parallel processes; the notebook's full run then only evaluates them.

An experiment notebook trains its models one after another in its training cell (the first code cell that
calls one of `TRAINING_FUNCTIONS`: `fit`, `fit_or_reuse`, `train_simulated`, `train_dataset`, `tta`), each in a run folder under `out_dir` that a later run
reuses when its budget is spent. This
tool runs the notebook's code cells, with the given parameters, up to and including that cell, once per job
and one process per job, each job with one value of every `--split` parameter (e.g. one seed and one method).
The run folders so fill side by side; then `--execute DEST` (or `make reports`, or papermill) runs the
whole notebook, which finds every model trained and evaluates them.

`--execute` runs the notebook in-process with execnb (nbdev's executor, which needs only IPython), with a
papermill-style `injected-parameters` cell: the way to get an executed report on a machine without
Jupyter, such as the GPU machine of `tools/device_reports.sh`. `tools/make_reports.py --publish` turns
that notebook into a committed report.

usage: python tools/train_parallel.py nbs/exp_unobserved.ipynb --params '{"scale": "cpu", "out_dir": "_reports/x"}'
           --split seeds=0,1,2 --split methods=observed,none --jobs 6 [--execute _reports/x/exp_unobserved.ipynb]
"""
import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def parameter_cell_index(cells: list[dict]) -> int:
    "Index of the notebook's cell tagged `parameters` (papermill's convention)."
    for i, cell in enumerate(cells):
        if "parameters" in cell.get("metadata", {}).get("tags", []): return i
    raise ValueError("the notebook has no cell tagged 'parameters'")


def injected_source(params: dict) -> str:
    "Python assignments of `params`, as papermill's injected cell holds them."
    return "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in params.items())


def with_parameters(nb: dict, params: dict) -> dict:
    "A copy of `nb` with an `injected-parameters` cell after its parameters cell."
    cells = list(nb["cells"])
    cells.insert(parameter_cell_index(cells) + 1, {"cell_type": "code", "execution_count": None, "id": "injected-parameters",
                                                    "metadata": {"tags": ["injected-parameters"]}, "outputs": [],
                                                    "source": injected_source(params)})
    return {**nb, "cells": cells}


# a call of the library's training functions, not a method such as `Normalizer().fit(`
TRAINING_FUNCTIONS = ("fit", "fit_or_reuse", "train_simulated", "train_dataset", "tta")
TRAINING_CALL = re.compile(rf"(?<![.\w])({'|'.join(TRAINING_FUNCTIONS)})\(")


def training_sources(nb: dict) -> list[str]:
    "Sources of the code cells up to and including the first that trains (calls `fit` or a training recipe)."
    sources = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    last = next((i for i, s in enumerate(sources) if TRAINING_CALL.search(s)), None)
    if last is None: raise ValueError(f"no code cell of the notebook calls any of {', '.join(TRAINING_FUNCTIONS)}")
    return sources[:last + 1]


def train_job(notebook: Path, params: dict):
    "Run `notebook`'s cells up to its training cell with `params` in this process (`cwd` is the notebook's folder)."
    nb = with_parameters(json.loads(notebook.read_text()), params)
    os.chdir(notebook.parent)
    namespace = {"__name__": "__main__"}
    for source in training_sources(nb): exec(compile(source, str(notebook), "exec"), namespace)


def jobs_of(splits: list[str]) -> list[dict]:
    "Every combination of the `name=a,b,c` splits, each value as a one-element list."
    axes = []
    for split in splits:
        name, _, values = split.partition("=")
        if not values: raise ValueError(f"--split {split!r}: expected name=value,value")
        axes.append([(name, [int(v) if v.lstrip("-").isdigit() else v]) for v in values.split(",")])
    return [dict(combo) for combo in itertools.product(*axes)]


def run_jobs(notebook: Path, params: dict, jobs: list[dict], parallel: int, log_dir: Path) -> list[str]:
    "Each job in a process of its own (one torch thread), `parallel` at a time; returns the failed jobs' names."
    log_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    pending, running, failed = list(jobs), {}, []
    while pending or running:
        while pending and len(running) < parallel:
            job = pending.pop(0)
            name = "_".join(f"{k}{v[0]}" for k, v in job.items())
            cmd = [sys.executable, __file__, str(notebook), "--params", json.dumps({**params, **job}), "--one"]
            with open(log_dir / f"{name}.log", "w") as log:  # the child keeps its own handle
                running[name] = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        time.sleep(1)
        for name, proc in list(running.items()):
            if proc.poll() is None: continue
            del running[name]
            print(f"{name}: {'done' if proc.returncode == 0 else f'FAILED (exit {proc.returncode}), see its log'}", flush=True)
            if proc.returncode: failed.append(name)
    return failed


def execute(notebook: Path, params: dict, dest: Path, cell_timeout: int | None = None):
    "Run the whole notebook with execnb into `dest` (outputs kept), parameters injected as papermill does."
    from fastcore.nbio import dict2nb, write_nb
    from execnb.shell import CaptureShell
    nb = dict2nb(with_parameters(json.loads(notebook.read_text()), params))
    os.chdir(notebook.parent)
    start = time.perf_counter()
    try: CaptureShell(path=notebook.parent).run_all(nb, exc_stop=True, cell_timeout=cell_timeout)
    finally:  # a failed run keeps the outputs up to the failing cell, to read
        nb.metadata["acd_execute"] = {"parameters": params, "seconds": round(time.perf_counter() - start)}
        write_nb(nb, dest)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebook", type=Path)
    ap.add_argument("--params", default="{}", help="notebook parameters as JSON (out_dir is required)")
    ap.add_argument("--split", action="append", default=[],
                    help="name=v1,v2,...: one training job per value, combined across splits (none: no training phase)")
    ap.add_argument("--jobs", type=int, default=2, help="processes side by side (default 2)")
    ap.add_argument("--execute", type=Path, help="then run the whole notebook with execnb into this file")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    notebook, params = args.notebook.resolve(), json.loads(args.params)
    if "out_dir" not in params: ap.error("--params must give out_dir: the run folders the notebook's full run reuses")
    params["out_dir"] = str(Path(params["out_dir"]).resolve())
    if args.one: return train_job(notebook, params)
    if args.split:
        start = time.perf_counter()
        failed = run_jobs(notebook, params, jobs_of(args.split), args.jobs, Path(params["out_dir"]) / "train_logs")
        print(f"training: {time.perf_counter() - start:.0f} s, {len(failed)} job(s) failed", flush=True)
        if failed: raise SystemExit(f"failed: {failed}")
    if args.execute:
        start = time.perf_counter()
        execute(notebook, params, args.execute.resolve())
        print(f"notebook executed into {args.execute} in {time.perf_counter() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
