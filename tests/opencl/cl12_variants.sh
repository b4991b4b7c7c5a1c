#!/usr/bin/env bash
# The programs tgc_cl_enqueue_act builds (devices/opencl/kernels_fused_cl.c),
# as strict OpenCL C 1.2 like every .cl file (tests/CMakeLists.txt): the
# row functions of elementwise.cl, a variant's defines and an activation in
# front of nn.cl, at each tile. Exact float bits as the host writes them.
#   cl12_variants.sh CLANG SOURCE_DIR
set -u
clang=$1 root=$2
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
mark='/* ==== end of the row functions (tgc fused prelude) ==== */'
awk -v mark="$mark" '{ print } index($0, mark) { exit }' "$root/devices/opencl/kernels/elementwise.cl" > "$dir/prelude.cl"
grep -qF "$mark" "$dir/prelude.cl" || { echo "no end-of-rows mark in elementwise.cl"; exit 1; }
rc=0
for defines in '' '#define NN_CG_R 4'; do
  for act in '' '#define TGC_ACT(v) ew_row_LeakyRelu((v), as_float(0x3e4ccccdu), as_float(0x00000000u), as_float(0x00000000u))'; do
    { cat "$dir/prelude.cl"; echo; echo "$defines"; echo "$act"; cat "$root/devices/opencl/kernels/nn.cl"; } > "$dir/v.cl"
    if ! "$clang" -x cl -cl-std=CL1.2 -pedantic -Werror -fsyntax-only -I"$root" "$dir/v.cl"; then
      echo "FAIL: nn.cl with '$defines' and '$act'"
      rc=1
    fi
  done
done
[ $rc = 0 ] && echo "4 variants of nn.cl pass"
exit $rc
