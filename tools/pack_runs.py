"""Pack the run folders of a report for the trip back from a GPU machine, and unpack them here.

A run folder holds `run.json`, `history.json`, `best.pt` and `last.pt`. Packed, its `last.pt` keeps the model's
weights as they are and stores the optimiser's moments in bfloat16 (about half the file), which
`torch.optim.Optimizer.load_state_dict` casts back to the weights' dtype when the run resumes: a resumed run continues
from the same weights, position and history, with Adam's moments rounded to bf16. A `best.pt` whose weights are
`last.pt`'s (a run still improving) is packed without them and made whole again on unpacking, bit for bit.

What a device call brings back is limited (8 files, 16 MiB each, 64 MiB in all), so the runs travel as one tar,
gzip-compressed, cut into pieces of at most `--max-mib`, `DEST_PREFIX.tar.<k>of<n>`, joined again on unpacking (a run
may span two pieces: a model of a few million weights is larger than a piece). gzip takes about a fifth off weights
and moments in bfloat16 (their exponent bytes repeat; float32 mantissas hardly shrink) for about a second per 30 MiB:
three runs of the unobserved model at the paper's sizes (3.05 M weights each, best weights not the last) are 52.6 MiB
at step 2 below, over the 4 pieces of 13 MiB `tools/device_paper.sh` allows (so they would not have been resumable),
and 41.6 MiB compressed. Uncompressed pieces of an earlier pack_runs unpack as before. Where the runs would need more
than `--max-pieces` pieces, less travels, with a warning naming what is lost, one step at a time:
1. Adam's first moments are left out of `last.pt`: on resuming they restart at zero (the unpacked `last.pt` says so:
   `first_moment_restarted`); at β1 = 0.9 they forget their past in about ten steps, while the second moments
   (β2 = 0.999, a memory of about a thousand steps) travel in bf16;
2. the weights of `last.pt` and `best.pt` travel rounded to bfloat16 too (the runs resume, and are evaluated, from
   rounded weights; the unpacked files say so: `weights_rounded_to_bf16`): about half of step 1, and still resumable;
3. the `last.pt` files are left out, `best.pt`'s weights travel as they are: the runs can be evaluated, not resumed
   (smaller than step 2 only where a run's best weights are not its last);
4. `best.pt`'s weights travel rounded to bfloat16.
Where even that does not fit, nothing is written. (A report's evaluation runs where it trained, from the weights as
they are: what is rounded here is what the runs are resumed or evaluated from later.)

Unpacking reads and checks every tar in memory before it writes anything, and writes only what a run folder holds:
`<run>/<one of run.json, history.json, best.pt, last.pt>`, regular files (4 GiB in all), each checkpoint loaded with
`weights_only=True`. A link, a folder, a device, a path with `..` or from `/`, a file twice, or a run folder reached
through a link out of `--into` refuses the whole tar in one line: `extractall(filter="data")` alone let links through
on Python 3.11.7 (the tarfile filter bypass fixed in 3.11.13).

usage: python tools/pack_runs.py RUNS_DIR DEST_PREFIX [--max-mib 16] [--max-pieces 5]  -> DEST_PREFIX.tar.<k>of<n>
       python tools/pack_runs.py --unpack PIECE... --into RUNS_DIR
"""
import argparse
import gzip
import io
import math
import re
import sys
import tarfile
from pathlib import Path

import torch

KEEP = ("run.json", "history.json", "best.pt", "last.pt")
WEIGHTS_FROM_LAST = "weights_from_last"  # key of a packed best.pt whose weights are last.pt's
ROUNDED = "weights_rounded_to_bf16"  # key of a best.pt or last.pt whose weights travelled in bfloat16
RESTARTED = "first_moment_restarted"  # key of a last.pt whose Adam first moments did not travel
# what travels, from most to least: (what of last.pt's optimiser state: all, "second" moments or no last.pt at all,
# the weights in bf16) and what each step down loses
LEVELS = (("all", False, ""),
          ("second", False, "leaving Adam's first moments out of last.pt (they restart at zero on resuming)"),
          ("second", True, "also rounding the weights of last.pt and best.pt to bf16 (resumed and evaluated from them)"),
          (None, False, "leaving last.pt out instead, best.pt's weights as they are (evaluated, not resumed)"),
          (None, True, "also rounding best.pt's weights to bf16 (evaluated from rounded weights)"))
PIECE = re.compile(r"(?P<name>.+)\.tar\.(?P<k>\d+)of(?P<n>\d+)$")


def moments_in_bf16(ckpt: dict, keep_first: bool = True) -> dict:
    """A copy of checkpoint `ckpt` with its optimiser state's floating tensors (not the step counts) in bfloat16,
    without Adam's first moments (`exp_avg`) unless `keep_first`"""
    state = {i: {k: v.to(torch.bfloat16) if torch.is_floating_point(v) and k != "step" else v for k, v in s.items()
                 if keep_first or k != "exp_avg"}
             for i, s in ckpt["optimizer"]["state"].items()}
    return {**ckpt, "optimizer": {**ckpt["optimizer"], "state": state}, **({} if keep_first else {RESTARTED: True})}


def _rounded(weights: dict) -> dict:
    return {k: v.to(torch.bfloat16) if v.dtype == torch.float32 else v for k, v in weights.items()}


def _saved(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def _checkpoint(data: bytes, name: str) -> dict:
    """The checkpoint in `data` (from `name`), loaded with `weights_only=True`; one that does not load so (a pickle that
    could run code when loaded, or no checkpoint at all) is one line, without torch's advice to load it anyway"""
    try: ckpt = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises UnpicklingError, RuntimeError, EOFError... for what it cannot read
        reason = ("it holds pickled objects, which could run code when loaded" if "Weights only load failed" in str(e)
                  else " ".join(str(e).split()[:20]) or type(e).__name__)
        raise SystemExit(f"{name}: not a checkpoint pack_runs reads ({reason}); nothing written") from None
    if not isinstance(ckpt, dict):
        raise SystemExit(f"{name}: not a checkpoint pack_runs reads (a {type(ckpt).__name__}); nothing written")
    return ckpt


def _same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def packed_run(run: Path, last_state: str | None = "all", rounded: bool = False, runs: Path | None = None
               ) -> list[tuple[str, bytes]]:
    """The files of run folder `run` as packed: `(name in the tar, bytes)`, named by the folder's path under `runs`
    (default: its parent); `last_state`: what of `last.pt`'s optimiser state travels, `rounded`: the weights in bf16
    (see `LEVELS`)"""
    folder = run.relative_to(run.parent if runs is None else runs).as_posix()
    last = _checkpoint((run / "last.pt").read_bytes(), str(run / "last.pt")) if last_state else None
    files = []
    for name in KEEP:
        path = run / name
        if not path.exists() or (name == "last.pt" and not last_state): continue
        if name == "last.pt":
            packed = moments_in_bf16(last, keep_first=last_state == "all")
            data = _saved({**packed, "model": _rounded(last["model"]), ROUNDED: True} if rounded else packed)
        elif name == "best.pt" and (last_state or rounded):
            best = _checkpoint(path.read_bytes(), str(path))
            if last_state and _same_weights(best["model"], last["model"]):
                data = _saved({**{k: v for k, v in best.items() if k != "model"}, WEIGHTS_FROM_LAST: True})
            elif rounded: data = _saved({**best, "model": _rounded(best["model"]), ROUNDED: True})
            else: data = path.read_bytes()
        else: data = path.read_bytes()
        files.append((f"{folder}/{name}", data))
    return files


def tar_of(files: list[tuple[str, bytes]]) -> bytes:
    "One tar holding `files` (`(name, bytes)`)."
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def archive(files: list[tuple[str, bytes]]) -> bytes:
    "`tar_of(files)`, gzip-compressed (no time stamp: the same files give the same bytes)"
    return gzip.compress(tar_of(files), compresslevel=6, mtime=0)


def pack(runs: Path, prefix: str, max_mib: float = 16, max_pieces: int = 5) -> list[Path]:
    """The run folders under `runs`, at any depth (those with a `last.pt`; a report may group its runs, as
    exp_unobserved does by variant), into pieces `<prefix>.tar.<k>of<n>`; see the module's text."""
    folders = sorted(last.parent for last in runs.rglob("last.pt"))
    if not folders: raise SystemExit(f"no run folders with a last.pt under {runs}")
    there = sorted(Path(prefix).parent.glob(f"{Path(prefix).name}.tar.*"))
    if there: raise SystemExit(f"{there[0]} exists: pack to another DEST_PREFIX (nothing is overwritten)")
    max_bytes = int(max_mib * 2**20)
    for last_state, rounded, loss in LEVELS:
        if loss: print(f"warning: {len(folders)} runs do not fit {max_pieces} pieces of {max_mib:g} MiB; {loss}",
                       file=sys.stderr)
        data = archive([f for run in folders for f in packed_run(run, last_state, rounded, runs)])
        n = math.ceil(len(data) / max_bytes)
        if n <= max_pieces: break
    else:
        raise SystemExit(f"{len(folders)} runs do not fit {max_pieces} pieces of {max_mib:g} MiB even so "
                         f"({len(data) / 2**20:.1f} MiB); nothing written")
    written = []
    for k in range(n):
        dest = Path(f"{prefix}.tar.{k + 1}of{n}")
        partial = dest.with_name(dest.name + ".partial")
        partial.write_bytes(data[k * max_bytes:(k + 1) * max_bytes])
        partial.rename(dest)
        written.append(dest)
    print(f"{prefix}.tar: {len(data) / 2**20:.1f} MiB gzip-compressed, {len(folders)} runs, in {n} piece(s)")
    return written


def _float32(weights: dict) -> dict:
    "Weights that travelled in bfloat16 in float32 again, as the model's are."
    return {k: v.float() if v.dtype == torch.bfloat16 else v for k, v in weights.items()}


def joined(pieces: list[Path]) -> dict[str, bytes]:
    "The tars whose pieces these are, joined: `{prefix: bytes}`; a piece missing is an error naming it."
    tars = {}
    for path in pieces:
        match = PIECE.fullmatch(path.name)
        if match is None: raise SystemExit(f"{path} is not a piece written by pack_runs (NAME.tar.<k>of<n>)")
        tars.setdefault((str(path.parent / match["name"]), int(match["n"])), {})[int(match["k"])] = path
    out = {}
    for (prefix, n), parts in tars.items():
        missing = sorted(set(range(1, n + 1)) - set(parts))
        if missing: raise SystemExit(f"{prefix}.tar: piece(s) {', '.join(f'{k}of{n}' for k in missing)} missing")
        out[prefix] = b"".join(parts[k].read_bytes() for k in range(1, n + 1))
    return out


MAX_BYTES = 2 ** 32  # of files in one tar: pack's pieces hold about 100 MiB (a run at the paper's sizes about 40 MiB)


def _member_problem(member: tarfile.TarInfo, room: int) -> str | None:
    "What keeps `member` from being a run folder's file (`<run>/<one of KEEP>`, a regular file within `room` bytes)"
    if member.issym() or member.islnk(): return f"a link (to {member.linkname!r})"
    if member.type not in (tarfile.REGTYPE, tarfile.AREGTYPE):  # a sparse file too: pack writes none, it could be huge
        return "a folder" if member.isdir() else "a device, pipe, sparse or other special file"
    parts = member.name.split("/")
    if member.name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return "a path that leaves the runs folder (absolute, empty, '.' or '..' parts)"
    if len(parts) < 2 or parts[-1] not in KEEP: return f"not one of a run folder's files ({', '.join(KEEP)})"
    if member.size > room: return f"beyond the {MAX_BYTES / 2**30:g} GiB a packed tar holds"
    return None


def _runs_in(prefix: str, data: bytes) -> dict[str, dict[str, bytes]]:
    """The run folders of one packed tar, read in memory: `{folder: {file: bytes}}`; any member that is not a run
    folder's regular file (a link, a folder, a device, a path leaving the runs folder, a name twice) refuses it all"""
    runs, room = {}, MAX_BYTES
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar:
                problem = _member_problem(member, room)
                folder, _, name = member.name.rpartition("/")
                if problem is None and name in runs.get(folder, {}): problem = "in the tar twice"
                if problem: raise SystemExit(f"{prefix}.tar: refusing to unpack it, {member.name!r} is {problem}; "
                                             "nothing written")
                runs.setdefault(folder, {})[name] = tar.extractfile(member).read()
                room -= member.size
    except (tarfile.TarError, EOFError, OSError) as e:
        raise SystemExit(f"{prefix}.tar: not a tar pack_runs wrote ({e}); nothing written") from None
    return runs


def _whole(files: dict[str, bytes], where: str) -> dict[str, bytes]:
    "A packed run's files made whole: `last.pt`'s first moments and float32 weights, `best.pt`'s weights if shared"
    files = dict(files)
    last = _checkpoint(files["last.pt"], f"{where}/last.pt") if "last.pt" in files else None
    try:
        if last is not None and (last.get(RESTARTED) or last.get(ROUNDED)):
            for state in last["optimizer"]["state"].values():  # Adam's first moments start again from zero
                state.setdefault("exp_avg", torch.zeros_like(state["exp_avg_sq"]))
            last["model"] = _float32(last["model"])
            files["last.pt"] = _saved(last)
        if "best.pt" in files:
            best = _checkpoint(files["best.pt"], f"{where}/best.pt")
            if best.pop(WEIGHTS_FROM_LAST, False):
                if last is None: raise KeyError("last.pt, whose weights it shares")
                files["best.pt"] = _saved({**best, "model": last["model"],
                                           **({ROUNDED: True} if last.get(ROUNDED) else {})})
            elif best.get(ROUNDED): files["best.pt"] = _saved({**best, "model": _float32(best["model"])})
    except (KeyError, TypeError, AttributeError) as e:
        raise SystemExit(f"{where}: not a run pack_runs packed (no {e}); nothing written") from None
    return files


def unpack(pieces: list[Path], into: Path):
    """Extract packed run folders into `into`, each `best.pt` and `last.pt` made whole; a run folder that exists is
    refused, never overwritten. Every tar is read and checked in memory before anything is written: only run folders'
    regular files travel (see `_runs_in`), never a link, nor a path outside `into`."""
    runs = {}
    for prefix, data in joined(pieces).items():
        found = {folder: _whole(files, f"{prefix}.tar: {folder}") for folder, files in _runs_in(prefix, data).items()}
        taken = [n for n in found if (into / n).exists() or n in runs]
        if taken: raise SystemExit(f"{prefix}.tar: {into} already holds {taken}; remove them or unpack elsewhere")
        outside = [n for n in found if not (into / n).resolve().is_relative_to(into.resolve())]  # through a link there
        if outside: raise SystemExit(f"{prefix}.tar: {[into / n for n in outside]} lead out of {into} (a symbolic link "
                                     "on the way); unpack elsewhere")
        runs.update({n: (prefix, files) for n, files in found.items()})
    for name, (prefix, files) in sorted(runs.items()):
        (into / name).mkdir(parents=True)
        for file, data in files.items(): (into / name / file).write_bytes(data)
    for prefix in dict.fromkeys(prefix for prefix, _ in runs.values()):
        print(f"{prefix}.tar -> {into}/{', '.join(n for n, (p, _) in sorted(runs.items()) if p == prefix)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="RUNS_DIR DEST_PREFIX, or the pieces with --unpack")
    ap.add_argument("--unpack", action="store_true")
    ap.add_argument("--into", type=Path, help="with --unpack: the report's runs folder")
    ap.add_argument("--max-mib", type=float, default=16, help="largest piece, MiB")
    ap.add_argument("--max-pieces", type=int, default=5, help="most pieces (beyond that, less travels: see above)")
    args = ap.parse_args()
    if args.unpack:
        if args.into is None: ap.error("--unpack needs --into RUNS_DIR")
        unpack([Path(p) for p in args.paths], args.into)
    else:
        if len(args.paths) != 2: ap.error("pack needs RUNS_DIR DEST_PREFIX")
        pack(Path(args.paths[0]), args.paths[1], args.max_mib, args.max_pieces)


if __name__ == "__main__":
    main()
