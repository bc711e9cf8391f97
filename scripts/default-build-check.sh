#!/usr/bin/env bash
# The default build's own messages, checked on a default-feature binary (`make test` gives its dev build; it runs the test
# suite with features rtl and mpi, so the tests of the builds without them do not run there):
# `trnsim diff` and `trnsim run --mpi` without those features are one-line usage errors (exit
# 2) saying how to build them. Prints a libtest-style result line, which scripts/test-summary.sh
# counts. Usage: scripts/default-build-check.sh TRNSIM
set -uo pipefail
T=${1:?usage: scripts/default-build-check.sh TRNSIM}
passed=0
failed=0
check() { # NAME WANT... -- ARGS...: exit 2, one line of stderr containing every WANT
    local name=$1; shift
    local wants=()
    while [ "$1" != "--" ]; do wants+=("$1"); shift; done
    shift
    local err code
    err=$("$T" "$@" 2>&1 >/dev/null); code=$?
    local ok=1
    [ "$code" = 2 ] || ok=0
    [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || ok=0
    for w in "${wants[@]}"; do case "$err" in *"$w"*) ;; *) ok=0 ;; esac; done
    if [ $ok = 1 ]; then
        echo "test default_build::$name ... ok"; passed=$((passed + 1))
    else
        echo "test default_build::$name ... FAILED (exit $code): $err"; failed=$((failed + 1))
    fi
}
check diff_without_rtl_says_how_to_build "--features rtl" "apt-get install -y verilator" -- diff islip_n8_i1
check mpi_without_the_feature_says_how_to_build "make mpi" "libopenmpi-dev" -- run --mpi fabric-allreduce-nl72x2-nodes
if [ $failed = 0 ]; then
    echo "test result: ok. $passed passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"
else
    echo "test result: FAILED. $passed passed; $failed failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"
    exit 1
fi
