# Helpers for the command-line tests: each test script sources this with
# $1 = the tgc binary and $2 = the repository root.
set -u
TGC=$1
ROOT=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FAILS=0
PASSES=0

pass() { PASSES=$((PASSES + 1)); }
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

# expect_exit CODE DESCRIPTION -- COMMAND...: runs COMMAND, output in $WORK/out, $WORK/err.
expect_exit() {
    local want=$1 what=$2
    shift 3
    "$@" >"$WORK/out" 2>"$WORK/err"
    local got=$?
    if [ "$got" = "$want" ]; then pass; else fail "$what: exit $got, expected $want"; sed 's/^/  | /' "$WORK/err" >&2; fi
}

# expect_grep PATTERN FILE DESCRIPTION
expect_grep() {
    if grep -q -- "$1" "$2"; then pass; else fail "$3: '$1' not found in $(basename "$2")"; sed 's/^/  | /' "$2" >&2; fi
}

finish() {
    echo "$PASSES passed, $FAILS failed"
    [ "$FAILS" = 0 ]
}
