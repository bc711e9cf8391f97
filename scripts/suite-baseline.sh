#!/usr/bin/env bash
# The stored baseline of the default suite's results: tests/baselines/suite-results.json is the
# results JSON (`trnsim run --json`, simulated statistics only) of every benchmark of `trnsim
# list` but the four multi-chip runs that `make test` leaves out of its determinism check
# (DETERMINISM_LEAVE_OUT; tests/multichip_* cover them on small shapes): the whole single-chip
# suite, every nc-* benchmark among it. A change of any simulated figure shows as a difference.
#
# Usage: scripts/suite-baseline.sh check RESULTS.json
#          compares a results JSON of that selection (e.g. the determinism check's first run,
#          which `make test` passes here) with the baseline byte for byte, all but the package
#          version line; names the first differing lines.
#        scripts/suite-baseline.sh update
#          runs the selection once (`trnsim run --jobs 2 --json`) and writes the baseline. Only
#          when a model change is meant to move figures: the commit must say so and why.
#        scripts/suite-baseline.sh list
#          prints the selection, one benchmark a line.
# Env:   TRNSIM  the binary (default target/release/trnsim; results are the same for the dev
#                build), DETERMINISM_LEAVE_OUT  the regex of benchmarks left out.
# Exit:  0 identical (or written); 1 a difference or a failed run; 2 usage or setup error.
set -euo pipefail

# shellcheck source=lib/trnsim-binary.sh
. "$(dirname "$0")/lib/trnsim-binary.sh" suite-baseline
BASELINE=$ROOT/tests/baselines/suite-results.json
LEAVE_OUT=${DETERMINISM_LEAVE_OUT:-tp-matmul-4|tp-matmul-16|tp-matmul-64|moe-alltoall-144}

selection() {
    "$TRNSIM" list | awk '{ print $1 }' | grep -vxE "$LEAVE_OUT"
}

case "${1:-}" in
    check)
        [ $# -eq 2 ] || { echo "suite-baseline: check takes one results JSON" >&2; exit 2; }
        [ -s "$2" ] || { echo "suite-baseline: $2 is missing or empty" >&2; exit 2; }
        # The package version (the top-level "trnsim" key) is not a simulated figure: a
        # release bump must not need a new baseline.
        figures() { grep -v '^  "trnsim": ' -- "$1"; }
        if ! where=$(cmp <(figures "$BASELINE") <(figures "$2") 2>&1); then
            echo "suite-baseline: FAIL: $2 differs from the stored baseline: ${where##*differ: }" >&2
            diff -u <(figures "$BASELINE") <(figures "$2") | sed -n '1,40p' >&2 || true
            echo "suite-baseline: if the change is intended, run \`scripts/suite-baseline.sh update\`" \
                "and say in the commit which figures moved and why" >&2
            exit 1
        fi
        echo "suite-baseline: results byte-identical to tests/baselines/suite-results.json (the version line aside)"
        ;;
    update)
        mapfile -t benches < <(selection)
        tmp=$(mktemp "${TMPDIR:-/tmp}/suite-baseline.XXXXXX.json")
        trap 'rm -f "$tmp"' EXIT
        "$TRNSIM" run --jobs "${JOBS:-2}" --json "$tmp" "${benches[@]}" >/dev/null
        mv "$tmp" "$BASELINE"
        trap - EXIT
        echo "suite-baseline: wrote tests/baselines/suite-results.json (${#benches[@]} benchmarks)"
        ;;
    list)
        selection
        ;;
    *)
        echo "usage: scripts/suite-baseline.sh check RESULTS.json | update | list" >&2
        exit 2
        ;;
esac
