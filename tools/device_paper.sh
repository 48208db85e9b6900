#!/usr/bin/env bash
# One call of the `device` tool (a GPU machine without network) that spends its minutes on one prepared plan:
#   1. the authors' trainer on springs data (their file layout, our simulator), for its samples/s beside ours;
#   2. bench/bench_ensemble.py: samples/s and TFLOP/s of K = 1, 3, 9, 27 models trained by one `fit`;
#   3. a paper-scale report: REPORT's notebook at scale `paper` with PARAMS_JSON (its seeds trained as one ensemble),
#      then executed with execnb (tools/train_parallel.py --execute).
# Everything lands in $OUT: authors.log, bench.txt, <report>.tar.gz (executed notebook, results.json, figures) and
# <report>_runs.tar.<k>of<n>, one gzip-compressed tar in at most 4 pieces of 13 MiB (each run folder's run.json,
# history.json, best.pt and a last.pt whose optimiser state is stored in bf16: what the next GPU run resumes from), so
# that the 8 files and 64 MiB a device call brings back hold it all, and so that the pieces and .whl (7 MiB) fit the
# 64 MiB the next call carries; where they cannot, less travels, with a warning (tools/pack_runs.py: first Adam's first
# moments, then the weights' float32 precision, then last.pt).
# Each phase has its own time limit (0 skips it; the report's covers building its datasets too) and a failed phase
# does not stop the next.
# usage: tools/device_paper.sh AUTHORS_SECONDS BENCH_SECONDS REPORT_SECONDS REPORT NOTEBOOK PARAMS_JSON [BENCH_ARGS...]
#        (environment: COMPILE_IF_FASTER, see phase 2; AUTHORS_TRAIN, see phase 1)
# The device call carries .whl (execnb and its needs: `bash tools/device_wheels.sh` downloads them), .anchors (the
# authors' code, copied from ../shared/anchors, for timing only) and, to continue the runs of an earlier call, .resume
# (the pieces it brought back, unpacked into the report's runs folder before the notebook runs: its models resume where
# they stopped).
set -uo pipefail
authors_s=$1 bench_s=$2 report_s=$3 report=$4 notebook=$5 params=$6; shift 6
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 MPLBACKEND=Agg
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
t0=$SECONDS

# 1. the authors' trainer: 12,800 training samples (100 batches of 128; AUTHORS_TRAIN), 4 epochs, their DataLoader
# workers
if [ "$authors_s" -gt 0 ]; then
  n_ref=${AUTHORS_TRAIN:-12800}
  ref=/tmp/ref; rm -rf $ref; mkdir -p $ref
  cp -r .anchors/ref_acd $ref/
  sed -i 's/train_data, batch_size=batch_size, shuffle=True, num_workers=0/train_data, batch_size=batch_size, shuffle=True, num_workers=8/' \
      $ref/ref_acd/codebase/utils/data_loader.py
  sed "s/(\"train\", 2000, 49, 1)/(\"train\", $n_ref, 49, 1)/" .anchors/make_ref_data.py > $ref/make_ref_data.py
  (cd $ref && timeout -k 5 "$authors_s" bash -c "python3 make_ref_data.py $ref/data && cd ref_acd/codebase && \
    python3 train.py --suffix _springs5 --datadir $ref/data --epochs 4 --test_samples 20 --save_folder $ref/logs") \
    > "$OUT/authors.log" 2>&1
  python3 - "$OUT/authors.log" "$n_ref" <<'EOF'
import re, sys
times = [float(t) for t in re.findall(r"^\d+ train.*?time: ([\d.]+)s", open(sys.argv[1]).read(), re.M)]
print(f"authors_epoch_seconds: {times}")
if len(times) > 1: print(f"authors_springs_samples_per_s: {int(sys.argv[2]) * (len(times) - 1) / sum(times[1:]):.0f}")
EOF
fi
echo "authors phase: $((SECONDS - t0)) s"

# 2. the ensemble benchmark
t1=$SECONDS
[ "$bench_s" -gt 0 ] && timeout -k 5 "$bench_s" python3 bench/bench_ensemble.py "$@" 2>&1 | tee "$OUT/bench.txt"
echo "bench phase: $((SECONDS - t1)) s"

# the report trains compiled (compile="model") where the bench found compiled steps at least 10 % faster:
# COMPILE_IF_FASTER names the bench lines to compare, e.g. springs_mlp_k3 (springs_mlp_k3_compiled_samples_per_s
# against springs_mlp_k3_samples_per_s)
if [ -n "${COMPILE_IF_FASTER:-}" ] && [ -f "$OUT/bench.txt" ]; then
  params=$(python3 - "$params" "$OUT/bench.txt" "$COMPILE_IF_FASTER" <<'EOF'
import json, re, sys
params, text, stem = json.loads(sys.argv[1]), open(sys.argv[2]).read(), sys.argv[3]
def rate(key):
    found = re.search(rf"^{key}: ([\d.]+)$", text, re.M)
    return float(found.group(1)) if found else None
plain, compiled = rate(f"{stem}_samples_per_s"), rate(f"{stem}_compiled_samples_per_s")
faster = bool(plain and compiled and compiled > 1.1 * plain)
if faster: params["preset_overrides"] = {**(params.get("preset_overrides") or {}), "compile": "model"}
print(f"report compiled: {faster} ({stem}: {compiled} samples/s compiled, {plain} not)", file=sys.stderr)
print(json.dumps(params))
EOF
  )
fi

# 3. the paper-scale report: the notebook builds its datasets side by side (acd_nb.data.build_datasets), trains its
#    models as one ensemble and evaluates them
if [ "$report_s" -gt 0 ]; then
  t2=$SECONDS
  work=$PWD/_reports/device/$report
  params=$(python3 -c 'import json, sys; print(json.dumps({**json.loads(sys.argv[1]), "out_dir": sys.argv[2]}))' "$params" "$work")
  resume=$(ls .resume/"${report}"_runs.tar.* 2>/dev/null)
  [ -n "$resume" ] && python3 tools/pack_runs.py --unpack $resume --into "$work/runs"
  timeout -k 10 "$report_s" python3 tools/train_parallel.py "nbs/$notebook.ipynb" --params "$params" --execute "$work/$report.ipynb"
  echo "report phase: exit $?, $((SECONDS - t2)) s"
  (cd "$work" && tar czf "$OUT/$report.tar.gz" $(ls "$report.ipynb" results.json *.png 2>/dev/null))
  python3 tools/pack_runs.py "$work/runs" "$OUT/${report}_runs" --max-mib 13 --max-pieces 4
fi
ls -la "$OUT"
echo "total: $((SECONDS - t0)) s"
