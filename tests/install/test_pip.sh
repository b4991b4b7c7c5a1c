#!/usr/bin/env bash
# The Python package installs offline: pip install ./python (no index, no
# network) into a fresh virtual environment that sees Debian's numpy, then
# imported from outside the repository, where it must find the libtgc it
# bundled, and one eager op run.
# Usage: test_pip.sh PYTHON SOURCE_DIR LIBTGC
set -u
PY=$1
ROOT=$2
export TGC_LIBRARY=$3   # what setup.py bundles
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp -r "$ROOT/python" "$WORK/src"  # pip builds in place: not in the checkout
rm -rf "$WORK/src/build" "$WORK/src"/*.egg-info
"$PY" -m venv --system-site-packages "$WORK/venv" || exit 1
"$WORK/venv/bin/pip" install --no-index --disable-pip-version-check -q "$WORK/src" >"$WORK/pip.log" 2>&1 ||
    { cat "$WORK/pip.log"; echo "FAIL: pip install"; exit 1; }
cd "$WORK" || exit 1
env -u TGC_LIBRARY -u PYTHONPATH "$WORK/venv/bin/python" - <<'PYEOF' || { echo "FAIL: the installed package"; exit 1; }
import numpy as np
import tgc
assert "venv" in tgc.library_path, tgc.library_path  # the bundled copy, not the build tree's
y = tgc.tensor(np.float32([1, 2])) + tgc.tensor(np.float32([10, 20]))
assert list(y.numpy()) == [11, 22]
print("pip-installed tgc:", tgc.library_path)
PYEOF
