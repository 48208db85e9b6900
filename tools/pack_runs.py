"""Pack each run folder of a report for the trip back from a GPU machine, and unpack them here.

A run folder holds `run.json`, `history.json`, `best.pt` and `last.pt`; packed, its `last.pt` keeps the model's
weights as they are and stores the optimiser's moments in bfloat16 (about half the file: what one device call can
bring back), which `torch.optim.Optimizer.load_state_dict` casts back to the weights' dtype when the run resumes.
A resumed run so continues from the same weights, position and history, with Adam's moments rounded to bf16.

usage: python tools/pack_runs.py RUNS_DIR DEST_PREFIX      -> DEST_PREFIX_<run>.tar, one per run folder
       python tools/pack_runs.py --unpack TAR... --into RUNS_DIR
"""
import argparse
import io
import tarfile
from pathlib import Path

import torch

KEEP = ("run.json", "history.json", "best.pt", "last.pt")


def moments_in_bf16(ckpt: dict) -> dict:
    "A copy of checkpoint `ckpt` with its optimiser state's floating tensors (not the step counts) in bfloat16."
    state = {i: {k: v.to(torch.bfloat16) if torch.is_floating_point(v) and k != "step" else v for k, v in s.items()}
             for i, s in ckpt["optimizer"]["state"].items()}
    return {**ckpt, "optimizer": {**ckpt["optimizer"], "state": state}}


def pack(runs: Path, prefix: str) -> list[Path]:
    "One tar per run folder under `runs`, named `<prefix>_<folder>.tar`."
    written = []
    for run in sorted(p for p in runs.iterdir() if (p / "last.pt").exists()):
        dest = Path(f"{prefix}_{run.name}.tar")
        with tarfile.open(dest, "w") as tar:
            for name in KEEP:
                path = run / name
                if not path.exists(): continue
                if name == "last.pt":
                    buffer = io.BytesIO()
                    torch.save(moments_in_bf16(torch.load(path, map_location="cpu", weights_only=True)), buffer)
                    info = tarfile.TarInfo(f"{run.name}/{name}")
                    info.size = buffer.tell()
                    buffer.seek(0)
                    tar.addfile(info, buffer)
                else: tar.add(path, arcname=f"{run.name}/{name}")
        print(f"{dest}: {dest.stat().st_size / 2**20:.1f} MiB")
        written.append(dest)
    return written


def unpack(tars: list[Path], into: Path):
    "Extract packed run folders into `into`; a run folder that exists is refused, never overwritten."
    into.mkdir(parents=True, exist_ok=True)
    for path in tars:
        with tarfile.open(path) as tar:
            names = {Path(m.name).parts[0] for m in tar.getmembers()}
            taken = [n for n in names if (into / n).exists()]
            if taken: raise SystemExit(f"{path}: {into} already holds {taken}; remove them or unpack elsewhere")
            tar.extractall(into, filter="data")
        print(f"{path} -> {into}/{', '.join(sorted(names))}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="RUNS_DIR DEST_PREFIX, or the tars with --unpack")
    ap.add_argument("--unpack", action="store_true")
    ap.add_argument("--into", type=Path, help="with --unpack: the report's runs folder")
    args = ap.parse_args()
    if args.unpack:
        if args.into is None: ap.error("--unpack needs --into RUNS_DIR")
        unpack([Path(p) for p in args.paths], args.into)
    else:
        if len(args.paths) != 2: ap.error("pack needs RUNS_DIR DEST_PREFIX")
        pack(Path(args.paths[0]), args.paths[1])


if __name__ == "__main__":
    main()
