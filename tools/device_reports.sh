#!/usr/bin/env bash
# One call of the `device` tool (a GPU machine without Jupyter or network) that builds an experiment's report.
# Installs the execnb wheels carried in .whl/ (`bash tools/device_wheels.sh`), trains the notebook's models side by
# side (tools/train_parallel.py, one process per job), runs the whole notebook with execnb, and leaves in $OUT:
#   <report>_runs.tar.gz  each run's history.json and run.json, and the training logs (written first);
#   <report>.tar.gz       the executed notebook, results.json and the figures.
# Checkpoints stay behind: they exceed what a device call brings back. Publish the report here with
#   python tools/make_reports.py --publish <executed notebook> --scale gpu <report>
# usage: tools/device_reports.sh REPORT NOTEBOOK PARAMS_JSON JOBS TRAIN_SECONDS SPLIT...
set -uo pipefail
report=$1 notebook=$2 params=$3 jobs=$4 train_seconds=$5; shift 5
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 MPLBACKEND=Agg
work=$PWD/_reports/device/$report
params=$(python3 -c 'import json, sys; print(json.dumps({**json.loads(sys.argv[1]), "out_dir": sys.argv[2]}))' "$params" "$work")
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
splits=(); for s in "$@"; do splits+=(--split "$s"); done
start=$SECONDS
timeout -k 10 "$train_seconds" python3 tools/train_parallel.py "nbs/$notebook.ipynb" --params "$params" "${splits[@]}" --jobs "$jobs"
echo "training phase: exit $?, $((SECONDS - start)) s"
(cd "$work" && tar czf "$OUT/${report}_runs.tar.gz" train_logs $(find runs -name history.json -o -name run.json))
start=$SECONDS
timeout -k 10 60 python3 tools/train_parallel.py "nbs/$notebook.ipynb" --params "$params" --execute "$work/$report.ipynb"
echo "notebook: exit $?, $((SECONDS - start)) s"
(cd "$work" && tar czf "$OUT/$report.tar.gz" "$report.ipynb" results.json *.png)
ls -la "$OUT"
