#!/usr/bin/env bash
# Packaging for C users: `cmake --install BUILD --prefix P` into a scratch
# prefix, then a small program (consumer/main.c) built against it twice:
# with pkg-config (tgc.pc must point at P, wherever P is) and with CMake's
# find_package(tgc) (the imported target tgc::tgc); both run.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR [EXTRA_CFLAGS]
set -u
BUILD=$1
ROOT=$2
EXTRA=${3:-}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
P="$WORK/prefix/tgc"  # not /usr/local: tgc.pc must follow the prefix
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

cmake --install "$BUILD" --prefix "$P" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; fail "cmake --install"; }
pc=$(find "$P" -name tgc.pc | head -1)
[ -n "$pc" ] || fail "no tgc.pc installed"
export PKG_CONFIG_PATH="$(dirname "$pc")"
incdir=$(pkg-config --variable=includedir tgc)
libdir=$(pkg-config --variable=libdir tgc)
[ -f "$incdir/tgc.h" ] || fail "pkg-config's includedir '$incdir' has no tgc.h"
[ -e "$libdir/libtgc.so" ] || fail "pkg-config's libdir '$libdir' has no libtgc.so"
case "$(cd "$incdir" 2>/dev/null && pwd -P)" in "$(cd "$P" && pwd -P)"/*) ;; *) fail "includedir '$incdir' is not under P";; esac

# pkg-config: flags from tgc.pc, the library found at run time by an rpath to its libdir.
# shellcheck disable=SC2046,SC2086
if cc -std=c11 $EXTRA -o "$WORK/consumer_pc" "$ROOT/tests/install/consumer/main.c" \
      $(pkg-config --cflags tgc) $(pkg-config --libs tgc) -Wl,-rpath,"$libdir" 2>"$WORK/cc.log"; then
    out=$("$WORK/consumer_pc") || fail "the pkg-config build failed to run: $out"
    [ "$out" = "tgc 0.1.0: 11 22 33" ] || fail "pkg-config build printed '$out'"
else
    cat "$WORK/cc.log" >&2
    fail "the pkg-config build did not compile"
fi

# CMake: find_package(tgc) with the prefix on CMAKE_PREFIX_PATH.
if cmake -S "$ROOT/tests/install/consumer" -B "$WORK/cmake-build" -DCMAKE_PREFIX_PATH="$P" \
         -DCMAKE_C_FLAGS="$EXTRA" -DCMAKE_EXE_LINKER_FLAGS="$EXTRA" >"$WORK/cmake.log" 2>&1 &&
   cmake --build "$WORK/cmake-build" >>"$WORK/cmake.log" 2>&1; then
    out=$("$WORK/cmake-build/consumer") || fail "the CMake build failed to run: $out"
    [ "$out" = "tgc 0.1.0: 11 22 33" ] || fail "CMake build printed '$out'"
else
    cat "$WORK/cmake.log" >&2
    fail "the CMake build did not configure or compile"
fi

# The Python package, installed beside the library, finds it there.
PY=${TGC_PYTHON:-/usr/bin/python3}
pydir=$(find "$P" -type d -name dist-packages | head -1)
if [ -n "$pydir" ] && [ -z "$EXTRA" ] && "$PY" -c "import numpy" 2>/dev/null; then  # sanitized: not loadable
    out=$(cd "$WORK" && env -u TGC_LIBRARY PYTHONPATH="$pydir" "$PY" -c \
          'import tgc, numpy as np; print(tgc.library_path); print(list((tgc.tensor(np.float32([1])) + 1).numpy()))' 2>&1)
    case "$out" in "$P"/*"[2.0]") ;; *) fail "the installed Python package: $out";; esac
elif [ -z "$pydir" ]; then
    fail "no Python package installed"
fi

# The installed command line finds its library relative to itself.
"$P/bin/tgc" --version >/dev/null || fail "the installed tgc does not run"
echo "$fails failed"
[ "$fails" = 0 ]
