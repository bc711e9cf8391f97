#!/usr/bin/env bash
# The last line of `make test`: how many tests passed, failed and were skipped, over every
# `cargo test` run of it. A test that could not run for want of a tool returns early, which
# libtest reports as "ok"; such a test appends its name to the skip log (see
# `trnsim_traces::skip_test`), and here it is counted as skipped, not passed.
#
# Usage: scripts/test-summary.sh TEST_OUTPUT SKIP_LOG
#   TEST_OUTPUT  the captured output of the `cargo test` runs (their "test result:" lines)
#   SKIP_LOG     one line per skipped test, `NAME<tab>WHY` (may be absent: nothing skipped)
# Prints `tests: P passed, F failed, S skipped` (and `I ignored` when some are), then one line
# per skipped test. Exit: 0 when no test failed, 1 otherwise, 2 usage.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 TEST_OUTPUT SKIP_LOG" >&2; exit 2; }
out=$1 log=$2
[ -f "$out" ] || { echo "test-summary: $out not found" >&2; exit 2; }
read -r passed failed ignored < <(awk '
    /^test result: / {
        for (i = 1; i <= NF; i++) {
            if ($(i + 1) ~ /^passed/) p += $i
            if ($(i + 1) ~ /^failed/) f += $i
            if ($(i + 1) ~ /^ignored/) g += $i
        }
    }
    END { printf "%d %d %d\n", p, f, g }' "$out")
skipped=0
[ -f "$log" ] && skipped=$(grep -c . "$log" || true)
line="tests: $((passed - skipped)) passed, $failed failed, $skipped skipped"
[ "$ignored" -eq 0 ] || line="$line, $ignored ignored"
echo "$line"
if [ "$skipped" -gt 0 ]; then
    awk -F'\t' '{ printf "  skipped: %s: %s\n", $1, $2 }' "$log"
fi
[ "$failed" -eq 0 ]
