"""tools/pack_runs.py: runs packed on a GPU machine (optimiser moments in bf16, one tar in size-capped pieces) unpack
here, whole, and resume; where the pieces would be too many, less travels, a step at a time."""
import shutil
import subprocess
import sys

import pytest
import torch

from conftest import ROOT
from acd_nb.core import get_preset, seed_everything
from acd_nb.model import ACD, ACDConfig
from acd_nb.train import TrainConfig, fit, load_checkpoint

TOOL = [sys.executable, str(ROOT / "tools" / "pack_runs.py")]


def tiny():
    seed_everything(0)
    return ACD.from_config(ACDConfig(n_features=4, n_steps=12, hidden=64))  # weights, not headers, fill its files


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    "Three one-epoch run folders under `runs`, and their data"
    root = tmp_path_factory.mktemp("pack")
    x = torch.randn(64, 3, 12, 4)
    edges = torch.randint(0, 2, (64, 3, 3)).float() * (1 - torch.eye(3))
    cfg = TrainConfig.from_preset(get_preset("ci"), epochs=1, progress=False)
    for name in ("a_seed0", "a_seed1", "a_seed2"): fit(tiny(), (x, edges), (x, edges), cfg, root / "runs" / name)
    return root, (x, edges)


def test_packed_runs_unpack_whole_and_resume(trained, tmp_path):
    root, data = trained
    subprocess.run(TOOL + [str(root / "runs"), str(tmp_path / "back")], check=True)
    packed = sorted(tmp_path.glob("back.tar.*"))
    assert [p.name for p in packed] == ["back.tar.1of1"]  # three small runs: one piece
    refused = subprocess.run(TOOL + [str(root / "runs"), str(tmp_path / "back")], capture_output=True, text=True)
    assert refused.returncode != 0 and "nothing is overwritten" in refused.stderr
    subprocess.run(TOOL + ["--unpack", *map(str, packed), "--into", str(tmp_path / "here")], check=True)
    for name in ("a_seed0", "a_seed1", "a_seed2"):
        original = load_checkpoint(root / "runs" / name / "last.pt")
        last = load_checkpoint(tmp_path / "here" / name / "last.pt")
        for k, w in original["model"].items(): assert torch.equal(last["model"][k], w), k  # weights as they were
        moments = [v for s in last["optimizer"]["state"].values() for k, v in s.items() if k != "step"]
        assert moments and all(v.dtype == torch.bfloat16 for v in moments)
        # best.pt (its weights are last.pt's after one epoch) travelled without them and is whole again
        best, best_back = (load_checkpoint(d / name / "best.pt") for d in (root / "runs", tmp_path / "here"))
        assert best.keys() == best_back.keys() and best["epoch"] == best_back["epoch"]
        for k, w in best["model"].items(): assert torch.equal(best_back["model"][k], w), k
    history = fit(tiny(), data, data, TrainConfig.from_preset(get_preset("ci"), epochs=2, progress=False),
                  tmp_path / "here" / "a_seed0")
    assert [h["epoch"] for h in history] == [1, 2]  # resumed after the packed epoch
    again = subprocess.run(TOOL + ["--unpack", str(packed[0]), "--into", str(tmp_path / "here")], capture_output=True,
                           text=True)
    assert again.returncode != 0 and "already holds" in again.stderr  # never overwritten


def pack_mib(root) -> float:
    "MiB of the three runs packed whole"
    from pack_runs import archive, packed_run
    return len(archive([f for run in sorted((root / "runs").iterdir()) for f in packed_run(run)])) / 2**20


def test_pieces_are_capped_and_joined(trained, tmp_path):
    root, _ = trained
    cap = str(pack_mib(root) / 2.5)  # three pieces, a run spanning two of them
    subprocess.run(TOOL + [str(root / "runs"), str(tmp_path / "v"), "--max-mib", cap], check=True)
    pieces = sorted(tmp_path.glob("v.tar.*"))
    assert [p.name for p in pieces] == ["v.tar.1of3", "v.tar.2of3", "v.tar.3of3"]
    assert all(p.stat().st_size <= float(cap) * 2**20 for p in pieces)
    short = subprocess.run(TOOL + ["--unpack", str(pieces[0]), str(pieces[2]), "--into", str(tmp_path / "no")],
                           capture_output=True, text=True)
    assert short.returncode != 0 and "2of3 missing" in short.stderr and not (tmp_path / "no").exists()
    subprocess.run(TOOL + ["--unpack", *map(str, reversed(pieces)), "--into", str(tmp_path / "here")], check=True)
    for name in ("a_seed0", "a_seed1", "a_seed2"):
        for file in ("last.pt", "best.pt"):
            original, back = (load_checkpoint(d / name / file) for d in (root / "runs", tmp_path / "here"))
            for k, w in original["model"].items(): assert torch.equal(back["model"][k], w), (name, file, k)



def test_pieces_are_gzip_and_old_plain_pieces_unpack(trained, tmp_path):
    "Pieces hold a gzip-compressed tar; pieces of a plain tar (an earlier pack_runs) unpack the same."
    root, _ = trained
    subprocess.run(TOOL + [str(root / "runs"), str(tmp_path / "z")], check=True)
    assert (tmp_path / "z.tar.1of1").read_bytes()[:2] == b"\x1f\x8b"
    from pack_runs import packed_run, tar_of
    (tmp_path / "plain.tar.1of1").write_bytes(tar_of([f for run in sorted((root / "runs").iterdir()) for f in packed_run(run)]))
    for piece, into in (("z.tar.1of1", "from_gzip"), ("plain.tar.1of1", "from_plain")):
        subprocess.run(TOOL + ["--unpack", str(tmp_path / piece), "--into", str(tmp_path / into)], check=True)
    for name in ("a_seed0", "a_seed1", "a_seed2"):
        for file in ("last.pt", "best.pt"):
            a, b = (load_checkpoint(tmp_path / into / name / file) for into in ("from_gzip", "from_plain"))
            for k, w in a["model"].items(): assert torch.equal(b["model"][k], w), (name, file, k)

def bf16(w): return w.to(torch.bfloat16).to(w.dtype)


@pytest.mark.parametrize("share, loss, resumable, rounded", [
    (0.85, "leaving Adam's first moments out", True, False),
    (0.6, "rounding the weights of last.pt and best.pt to bf16", True, True),
    (0.4, "rounding best.pt's weights to bf16", False, True)])
def test_less_travels_a_step_at_a_time(trained, tmp_path, share, loss, resumable, rounded):
    root, data = trained
    cap = str(share * pack_mib(root))  # one piece of this share of the whole
    out = subprocess.run(TOOL + [str(root / "runs"), str(tmp_path / "r"), "--max-mib", cap, "--max-pieces", "1"],
                         capture_output=True, text=True, check=True)
    assert loss in out.stderr and [p.name for p in tmp_path.glob("r.tar.*")] == ["r.tar.1of1"]
    subprocess.run(TOOL + ["--unpack", str(tmp_path / "r.tar.1of1"), "--into", str(tmp_path / "here")], check=True)
    assert sorted(p.name for p in (tmp_path / "here" / "a_seed1").iterdir()) == \
        ["best.pt", "history.json"] + (["last.pt"] if resumable else [])
    best, back = (load_checkpoint(d / "a_seed2" / "best.pt") for d in (root / "runs", tmp_path / "here"))
    assert back.get("weights_rounded_to_bf16", False) == rounded
    for k, w in best["model"].items():
        assert back["model"][k].dtype == w.dtype and torch.equal(back["model"][k], bf16(w) if rounded else w), k
    if resumable:  # the first moments start again from zero, the second ones travelled in bf16; it resumes
        original, last = (load_checkpoint(d / "a_seed0" / "last.pt") for d in (root / "runs", tmp_path / "here"))
        assert last["first_moment_restarted"] and last.get("weights_rounded_to_bf16", False) == rounded
        for k, w in original["model"].items(): assert torch.equal(last["model"][k], bf16(w) if rounded else w), k
        for i, state in original["optimizer"]["state"].items():
            assert not last["optimizer"]["state"][i]["exp_avg"].any()
            assert torch.equal(last["optimizer"]["state"][i]["exp_avg_sq"], state["exp_avg_sq"].to(torch.bfloat16))
        history = fit(tiny(), data, data, TrainConfig.from_preset(get_preset("ci"), epochs=2, progress=False),
                      tmp_path / "here" / "a_seed0")
        assert [h["epoch"] for h in history] == [1, 2]


def test_best_weights_as_they_are_before_rounding(trained, tmp_path):
    "A run whose best weights are not its last: evaluable at full precision is smaller than resumable in bf16."
    root, _ = trained
    run = tmp_path / "runs" / "b_seed0"
    shutil.copytree(root / "runs" / "a_seed0", run)
    best = load_checkpoint(run / "best.pt")
    torch.save({**best, "model": {k: w + 1 for k, w in best["model"].items()}}, run / "best.pt")
    whole = pack_mib(tmp_path)
    out = subprocess.run(TOOL + [str(tmp_path / "runs"), str(tmp_path / "r"), "--max-mib", str(0.42 * whole),
                                 "--max-pieces", "1"], capture_output=True, text=True, check=True)
    assert "leaving last.pt out instead, best.pt's weights as they are" in out.stderr
    subprocess.run(TOOL + ["--unpack", str(tmp_path / "r.tar.1of1"), "--into", str(tmp_path / "here")], check=True)
    back = load_checkpoint(tmp_path / "here" / "b_seed0" / "best.pt")
    assert not (tmp_path / "here" / "b_seed0" / "last.pt").exists() and "weights_rounded_to_bf16" not in back
    for k, w in back["model"].items(): assert torch.equal(w, best["model"][k] + 1), k


def test_too_little_room_writes_nothing(trained, tmp_path):
    root, _ = trained
    out = subprocess.run(TOOL + [str(root / "runs"), str(tmp_path / "x"), "--max-mib", str(pack_mib(root) / 10),
                                 "--max-pieces", "1"], capture_output=True, text=True)
    assert out.returncode != 0 and "nothing written" in out.stderr and not list(tmp_path.glob("x*"))


def test_run_folders_at_any_depth(trained, tmp_path):
    "A report that groups its runs (exp_unobserved: runs/<variant>/<method>_seed<s>) packs and unpacks them where they were."
    root, _ = trained
    nested = tmp_path / "runs"
    shutil.copytree(root / "runs" / "a_seed0", nested / "variant" / "a_seed0")
    shutil.copytree(root / "runs" / "a_seed1", nested / "a_seed1")
    subprocess.run(TOOL + [str(nested), str(tmp_path / "n")], check=True)
    subprocess.run(TOOL + ["--unpack", str(tmp_path / "n.tar.1of1"), "--into", str(tmp_path / "here")], check=True)
    for name in ("variant/a_seed0", "a_seed1"):
        for file in ("last.pt", "best.pt"):
            original, back = (load_checkpoint(d / name / file) for d in (nested, tmp_path / "here"))
            for k, w in original["model"].items(): assert torch.equal(back["model"][k], w), (name, file, k)
    again = subprocess.run(TOOL + ["--unpack", str(tmp_path / "n.tar.1of1"), "--into", str(tmp_path / "here")],
                           capture_output=True, text=True)
    assert again.returncode != 0 and "variant/a_seed0" in again.stderr  # never overwritten


def crafted_tar() -> bytes:
    """The tarfile filter bypass fixed in Python 3.11.13 (the machines run 3.11.7): 16 nested 247-character folders
    reached through one-letter links, a 254-character link 16 levels back up, a link `escape` through it and a file
    `escape/pwned.txt`, which `extractall(filter="data")` writes beside the target folder"""
    import io, tarfile
    long, steps, path, buffer = "d" * 247, "abcdefghijklmnop", "", io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        def add(name, kind, link="", data=b""):
            info = tarfile.TarInfo(name); info.type, info.linkname, info.size = kind, link, len(data)
            tar.addfile(info, io.BytesIO(data))
        for step in steps:
            add(path + long, tarfile.DIRTYPE); add(path + step, tarfile.SYMTYPE, long)
            path += long + "/"
        up = "/".join(steps) + "/" + "l" * 254
        add(up, tarfile.SYMTYPE, "../" * len(steps))
        add("escape", tarfile.SYMTYPE, up + "/..")
        add("escape/pwned.txt", tarfile.REGTYPE, data=b"pwned\n")
    return buffer.getvalue()


def _tar(members) -> bytes:
    "A tar of `(name, type, link, data)` members"
    import io, tarfile
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, kind, link, data in members:
            info = tarfile.TarInfo(name); info.type, info.linkname, info.size = kind, link, len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_unpack_writes_only_run_files_inside_into(trained, tmp_path):
    "Issue 51, S1: links, special members and paths out of --into refuse the whole tar in one line, nothing written."
    import argparse, io, tarfile
    from pack_runs import unpack
    root, _ = trained
    last = (root / "runs" / "a_seed0" / "last.pt").read_bytes()
    pickled = io.BytesIO(); torch.save({"model": {}, "config": argparse.Namespace(a=1)}, pickled)
    file, sym = tarfile.REGTYPE, tarfile.SYMTYPE
    cases = {  # tar -> what the one line says
        "crafted": (crafted_tar(), f"refusing to unpack it, {'d' * 247!r} is a folder; nothing written"),
        "links only": (_tar([("escape", sym, "..", b""), ("escape/run.json", file, "", b"{}")]),
                       "'escape' is a link (to '..')"),
        "up": (_tar([("../r/run.json", file, "", b"{}")]), "'../r/run.json' is a path that leaves the runs folder"),
        "absolute": (_tar([("/tmp/r/run.json", file, "", b"{}")]), "is a path that leaves the runs folder"),
        "hard link": (_tar([("r/run.json", file, "", b"{}"), ("r/last.pt", tarfile.LNKTYPE, "r/run.json", b"")]),
                      "'r/last.pt' is a link (to 'r/run.json')"),
        "device": (_tar([("r/last.pt", tarfile.CHRTYPE, "", b"")]), "is a device, pipe, sparse or other special file"),
        "not a run file": (_tar([("r/pwned.sh", file, "", b"rm -rf ~")]), "'r/pwned.sh' is not one of a run folder's files"),
        "twice": (_tar([("r/last.pt", file, "", last), ("r/last.pt", file, "", last)]), "'r/last.pt' is in the tar twice"),
        "pickled": (_tar([("r/last.pt", file, "", last), ("r/best.pt", file, "", pickled.getvalue())]),
                    "r/best.pt: not a checkpoint pack_runs reads (it holds pickled objects, which could run code when "
                    "loaded); nothing written"),
    }
    pieces = []
    for case, (data, said) in cases.items():
        pieces.append(tmp_path / f"{case}.tar.1of1"); pieces[-1].write_bytes(data)
        with pytest.raises(SystemExit) as refused: unpack([pieces[-1]], tmp_path / "into")
        assert said in str(refused.value) and "\n" not in str(refused.value), (case, refused.value)
        assert sorted(tmp_path.iterdir()) == sorted(pieces), case  # no --into, nothing beside it
    (tmp_path / "into").mkdir(); (tmp_path / "into" / "group").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "g.tar.1of1").write_bytes(_tar([("group/r/last.pt", file, "", last)]))
    with pytest.raises(SystemExit, match="lead out of .* \\(a symbolic link on the way\\)"):
        unpack([tmp_path / "g.tar.1of1"], tmp_path / "into")
    assert not (tmp_path / "elsewhere").exists()
    res = subprocess.run(TOOL + ["--unpack", str(tmp_path / "crafted.tar.1of1"), "--into", str(tmp_path / "cli")],
                         capture_output=True, text=True)  # as a user runs it: exit 1, one line
    assert res.returncode == 1 and res.stderr.count("\n") == 1 and "is a folder; nothing written" in res.stderr
    assert not (tmp_path / "cli").exists() and not list(tmp_path.rglob("pwned.txt"))
