"The notebooks are the source of truth: exporting and cleaning them must change nothing that is committed."
import shutil
import subprocess
import sys

from conftest import BIN, ROOT


def _snapshot(root):
    files = [*root.glob("nbs/**/*.ipynb"), *root.glob("acd_nb/**/*.py")]
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files if ".ipynb_checkpoints" not in p.parts}


def test_export_and_clean_change_nothing(tmp_path):
    "On a copy of the sources: tests running beside this one import acd_nb/, which an export rewrites"
    copy = tmp_path / "repo"
    for name in ("nbs", "acd_nb"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    before = _snapshot(copy)
    for cmd in ("nbdev-export", "nbdev-clean"):
        subprocess.run([str(BIN / cmd)], cwd=copy, check=True, capture_output=True)
    after = _snapshot(copy)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"nbdev-export/nbdev-clean changed {changed}: run `make sync` and commit the result"


def test_readme_matches_index_notebook():
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "make_readme.py"), "--check"], cwd=ROOT,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_package_docstring_lists_every_module():
    "nbdev lists a module in `acd_nb/__init__.py` only when its notebook's summary (`> ...`) spans two lines or more."
    init = (ROOT / "acd_nb" / "__init__.py").read_text()
    public = sorted(p.stem for p in (ROOT / "acd_nb").glob("[a-z]*.py"))
    assert [m for m in public if f"`acd_nb.{m}`" not in init] == []


def test_license_file_matches_pyproject():
    "pyproject declares Apache-2.0; the LICENSE file at the root is that license's text."
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text()
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0" in text
