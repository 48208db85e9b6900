"""`make lab`'s JupyterLab command: it serves on 127.0.0.1 from the project environment with a random token that
it prints, /api answers, /api/contents refuses requests without the token, and it stops by its PID."""
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager

from conftest import ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lab_command(port: int) -> list[str]:
    "The JupyterLab line of `make lab`, as make would run it (`make -n` prints it without running anything)."
    lines = subprocess.run(["make", "-n", "lab", f"LAB_PORT={port}"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return shlex.split(next(l for l in lines.splitlines() if " lab " in l and "jupyter" in l))


def get(url, token=None):
    req = urllib.request.Request(url, headers={"Authorization": f"token {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r: return r.status, r.read()
    except urllib.error.HTTPError as e: return e.code, e.read()


def test_make_lab_serves_with_token_and_stops_by_pid(tmp_path):
    port = free_port()
    cmd = lab_command(port)
    assert cmd[cmd.index("--ip") + 1] == "127.0.0.1" and Path(cmd[0]).parent == Path(".venv/bin")
    # a private config/runtime folder: the user's Jupyter settings (a disabled token, say) must not change the test
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    log = tmp_path / "lab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        token, deadline = None, time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            m = re.search(rf"127\.0\.0\.1:{port}/lab\?token=(\w+)", log.read_text())
            if m:
                token = m.group(1)
                try:
                    if get(f"{base}/api")[0] == 200: break
                except OSError: pass
            time.sleep(0.5)
        assert token and proc.poll() is None, f"JupyterLab did not start with a printed token within 60 s:\n{log.read_text()[-3000:]}"
        status, body = get(f"{base}/api")
        assert status == 200 and "version" in json.loads(body)
        assert get(f"{base}/api/contents")[0] in (401, 403)
        assert get(f"{base}/api/contents", token="wrong" + token)[0] in (401, 403)
        status, body = get(f"{base}/api/contents", token)
        assert status == 200 and "nbs" in {c["name"] for c in json.loads(body)["content"]}
        # the notebooks' kernel is offered and runs the project's interpreter
        kernel = nbformat.read(ROOT / "nbs" / "index.ipynb", as_version=4).metadata.kernelspec.name
        status, body = get(f"{base}/api/kernelspecs", token)
        assert status == 200 and kernel in json.loads(body)["kernelspecs"]
        argv0 = KernelSpecManager().get_kernel_spec(kernel).argv[0]
        # jupyter_client runs a bare `python` as the server's own interpreter, here .venv's
        assert argv0 == "python" or Path(argv0).resolve() == Path(sys.executable).resolve()
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try: proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    assert proc.returncode is not None
    try:
        os.kill(proc.pid, 0)
        raise AssertionError(f"JupyterLab (pid {proc.pid}) still running after SIGTERM")
    except ProcessLookupError: pass
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0, "port still open after JupyterLab stopped"
