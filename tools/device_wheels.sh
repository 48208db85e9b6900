#!/usr/bin/env bash
# Downloads into .whl/ the wheels a `device` call installs first (tools/device_paper.sh, tools/device_reports.sh):
# execnb and what it needs beyond the GPU machine's own packages (Python 3.12; the machine has torch, numpy, scipy,
# scikit-learn, pandas, matplotlib, tqdm, pygments and psutil, but not IPython or fastcore). About 7 MiB; .whl/ is kept
# out of git by .git/info/exclude, so that it travels only where a call names it in `carry`.
# usage: bash tools/device_wheels.sh
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
    -d .whl execnb fastcore ipython ipython-pygments-lexers jedi parso matplotlib-inline pexpect ptyprocess \
    prompt_toolkit wcwidth stack_data executing asttokens pure_eval traitlets
rm -rf /tmp/device_wheels_check
python3 -m pip install -q --no-index --no-deps --target /tmp/device_wheels_check .whl/*.whl
PYTHONPATH=/tmp/device_wheels_check python3 -c "from execnb.shell import CaptureShell; CaptureShell().run('1 + 1')"
rm -rf /tmp/device_wheels_check
du -sh .whl
