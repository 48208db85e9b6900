"""Pack the run folders of a report for the trip back from a GPU machine, and unpack them here.

A run folder holds `run.json`, `history.json`, `best.pt` and `last.pt`. Packed, its `last.pt` keeps the model's
weights as they are and stores the optimiser's moments in bfloat16 (about half the file), which
`torch.optim.Optimizer.load_state_dict` casts back to the weights' dtype when the run resumes: a resumed run continues
from the same weights, position and history, with Adam's moments rounded to bf16. A `best.pt` whose weights are
`last.pt`'s (a run still improving) is packed without them and made whole again on unpacking, bit for bit.

What a device call brings back is limited (8 files, 16 MiB each, 64 MiB in all), so the runs go into volumes of at
most `--max-mib` each, whole runs per volume, `DEST_PREFIX_<k>.tar`. Where they would need more than `--max-volumes`,
less travels, with a warning naming what is lost: first the `last.pt` files are left out (the runs can then be
evaluated, not resumed), then `best.pt`'s weights travel rounded to bfloat16 (evaluated from rounded weights; the
unpacked `best.pt` says so: `weights_rounded_to_bf16`). Where even that does not fit, nothing is written.

usage: python tools/pack_runs.py RUNS_DIR DEST_PREFIX [--max-mib 16] [--max-volumes 5]  -> DEST_PREFIX_<k>.tar
       python tools/pack_runs.py --unpack TAR... --into RUNS_DIR
"""
import argparse
import io
import sys
import tarfile
from pathlib import Path

import torch

KEEP = ("run.json", "history.json", "best.pt", "last.pt")
WEIGHTS_FROM_LAST = "weights_from_last"  # key of a packed best.pt whose weights are last.pt's
ROUNDED = "weights_rounded_to_bf16"  # key of a best.pt whose weights travelled in bfloat16
# what travels, from most to least: (with last.pt, best.pt's weights in bf16) and what each step down loses
LEVELS = ((True, False, ""), (False, False, "leaving their last.pt out (they can be evaluated, not resumed)"),
          (False, True, "also rounding best.pt's weights to bf16 (evaluated from rounded weights)"))


def moments_in_bf16(ckpt: dict) -> dict:
    "A copy of checkpoint `ckpt` with its optimiser state's floating tensors (not the step counts) in bfloat16."
    state = {i: {k: v.to(torch.bfloat16) if torch.is_floating_point(v) and k != "step" else v for k, v in s.items()}
             for i, s in ckpt["optimizer"]["state"].items()}
    return {**ckpt, "optimizer": {**ckpt["optimizer"], "state": state}}


def _saved(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def _same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def packed_run(run: Path, with_last: bool = True, rounded: bool = False) -> list[tuple[str, bytes]]:
    "The files of run folder `run` as packed: `(name in the tar, bytes)`; see `LEVELS`."
    last = torch.load(run / "last.pt", map_location="cpu", weights_only=True) if with_last else None
    files = []
    for name in KEEP:
        path = run / name
        if not path.exists() or (name == "last.pt" and not with_last): continue
        if name == "last.pt": data = _saved(moments_in_bf16(last))
        elif name == "best.pt" and (with_last or rounded):
            best = torch.load(path, map_location="cpu", weights_only=True)
            if with_last and _same_weights(best["model"], last["model"]):
                data = _saved({**{k: v for k, v in best.items() if k != "model"}, WEIGHTS_FROM_LAST: True})
            elif rounded:
                weights = {k: v.to(torch.bfloat16) if v.dtype == torch.float32 else v for k, v in best["model"].items()}
                data = _saved({**best, "model": weights, ROUNDED: True})
            else: data = path.read_bytes()
        else: data = path.read_bytes()
        files.append((f"{run.name}/{name}", data))
    return files


def volumes(runs: list[list[tuple[str, bytes]]], max_bytes: int) -> list[list[tuple[str, bytes]]] | str:
    """Packed runs, in order, into volumes of at most `max_bytes` (a tar's headers included), whole runs per volume;
    why not, where a run is larger than a volume"""
    out, size = [[]], 0
    for run in runs:
        run_size = sum(len(data) + 1024 for _, data in run)  # a tar header and padding per file, at most
        if run_size > max_bytes:
            return f"{run[0][0].split('/')[0]} is {run_size / 2**20:.2f} MiB packed, more than a volume"
        if size + run_size > max_bytes and out[-1]: out, size = out + [[]], 0
        out[-1].extend(run)
        size += run_size
    return out


def pack(runs: Path, prefix: str, max_mib: float = 16, max_volumes: int = 5) -> list[Path]:
    "The run folders under `runs` (those with a `last.pt`) into volumes `<prefix>_<k>.tar`; see the module's text."
    folders = sorted(p for p in runs.iterdir() if (p / "last.pt").exists())
    if not folders: raise SystemExit(f"no run folders with a last.pt under {runs}")
    there = sorted(Path(prefix).parent.glob(f"{Path(prefix).name}_*.tar"))
    if there: raise SystemExit(f"{there[0]} exists: pack to another DEST_PREFIX (nothing is overwritten)")
    max_bytes = int(max_mib * 2**20)
    for with_last, rounded, loss in LEVELS:
        if loss: print(f"warning: {len(folders)} runs do not fit {max_volumes} volumes of {max_mib:g} MiB; {loss}",
                       file=sys.stderr)
        packed = volumes([packed_run(f, with_last, rounded) for f in folders], max_bytes)
        if isinstance(packed, str): continue
        if len(packed) <= max_volumes: break
    else:
        why = packed if isinstance(packed, str) else f"they need {len(packed)} volumes"
        raise SystemExit(f"{len(folders)} runs do not fit {max_volumes} volumes of {max_mib:g} MiB even so ({why}); "
                         f"nothing written")
    written = []
    for k, files in enumerate(packed, 1):
        dest = Path(f"{prefix}_{k}.tar")
        with tarfile.open(dest, "w") as tar:
            for name, data in files:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        print(f"{dest}: {dest.stat().st_size / 2**20:.1f} MiB, {len({n.split('/')[0] for n, _ in files})} runs")
        written.append(dest)
    return written


def unpack(tars: list[Path], into: Path):
    """Extract packed run folders into `into`, each `best.pt` made whole; a run folder that exists is refused, never
    overwritten."""
    into.mkdir(parents=True, exist_ok=True)
    for path in tars:
        with tarfile.open(path) as tar:
            names = sorted({Path(m.name).parts[0] for m in tar.getmembers()})
            taken = [n for n in names if (into / n).exists()]
            if taken: raise SystemExit(f"{path}: {into} already holds {taken}; remove them or unpack elsewhere")
            tar.extractall(into, filter="data")
        for name in names:
            best_path = into / name / "best.pt"
            if not best_path.exists(): continue
            best = torch.load(best_path, map_location="cpu", weights_only=True)
            if best.pop(WEIGHTS_FROM_LAST, False):
                last = torch.load(into / name / "last.pt", map_location="cpu", weights_only=True)
                torch.save({**best, "model": last["model"]}, best_path)
            elif best.get(ROUNDED):  # float32 again, as the model's weights are
                weights = {k: v.float() if v.dtype == torch.bfloat16 else v for k, v in best["model"].items()}
                torch.save({**best, "model": weights}, best_path)
        print(f"{path} -> {into}/{', '.join(names)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="RUNS_DIR DEST_PREFIX, or the tars with --unpack")
    ap.add_argument("--unpack", action="store_true")
    ap.add_argument("--into", type=Path, help="with --unpack: the report's runs folder")
    ap.add_argument("--max-mib", type=float, default=16, help="largest volume, MiB")
    ap.add_argument("--max-volumes", type=int, default=5, help="most volumes (beyond that, less travels: see above)")
    args = ap.parse_args()
    if args.unpack:
        if args.into is None: ap.error("--unpack needs --into RUNS_DIR")
        unpack([Path(p) for p in args.paths], args.into)
    else:
        if len(args.paths) != 2: ap.error("pack needs RUNS_DIR DEST_PREFIX")
        pack(Path(args.paths[0]), args.paths[1], args.max_mib, args.max_volumes)


if __name__ == "__main__":
    main()
