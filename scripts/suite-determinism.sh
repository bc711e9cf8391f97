#!/usr/bin/env bash
# Determinism of the whole default suite: runs `trnsim run --json DIR/results.json --trace
# DIR/suite.pftrace` twice, into two temporary directories, and compares the results JSON and
# every trace byte for byte. With several benchmarks the CLI writes one trace per benchmark,
# DIR/suite.NAME.pftrace, and announces each on stderr as `trace: PATH`.
#
# Fails (exit 1) when: a run fails; the two runs differ in the results JSON or in any trace
# (the first differing file is named, with its first differing byte and line; the runs are then
# kept for inspection); the two runs' trace file lists differ; a run wrote no trace at all; a
# trace the CLI announced is missing, or a trace file appeared that the CLI did not announce;
# an announced trace is empty (checked after the comparison, which is reported either way).
# Benchmarks that write no trace by design (the CLI traces only benchmarks that are one
# simulation) are listed, not failed.
#
# Cost: two suite runs and twice the traces of one on disk (figures in docs/performance.md, "The
# default suite, item by item"); removed at exit unless a difference was found. Before the
# second run, the free space is checked against what the first one wrote.
#
# Usage: scripts/suite-determinism.sh [BENCH ...]
#   With benchmark names, only those run (results JSON and traces of those compared); `make
#   test` passes the suite without its four multi-chip runs (tp-matmul-4, -16, -64,
#   moe-alltoall-144: most of the suite's time), whose code paths the multi-chip tests run on
#   small shapes under a shuffled tick order. Without names: the whole default suite.
# Env:   TRNSIM  the binary (default target/release/trnsim of the repo;
#                build it with `cargo build --release -p trnsim-harness`)
#        TMPDIR  where the two run directories go (default /tmp)
#        KEEP=1  keep the run directories even when the runs agree
#        BASELINE=1  also compare the first run's results JSON with the stored baseline
#                (scripts/suite-baseline.sh check; `make test` sets it)
# Exit:  0 identical; 1 a difference or a failed run; 2 setup error.
set -euo pipefail

# shellcheck source=lib/trnsim-binary.sh
. "$(dirname "$0")/lib/trnsim-binary.sh" suite-determinism
for tool in cmp diff du; do
    command -v "$tool" >/dev/null 2>&1 || { echo "suite-determinism: $tool not found" >&2; exit 2; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/trnsim-determinism.XXXXXX")
keep=${KEEP:-0}
cleanup() {
    if [ "$keep" = 1 ]; then
        echo "suite-determinism: runs kept in $WORK" >&2
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

fail() {
    keep=1
    echo "suite-determinism: FAIL: $*" >&2
    exit 1
}

# One run of the whole suite into $WORK/$1; leaves the sorted announced trace names in
# $WORK/$1.announced and the sorted trace files on disk in $WORK/$1.files.
run_suite() {
    local dir=$WORK/$1 t0 t1
    mkdir -p "$dir"
    t0=$(date +%s.%N)
    if ! "$TRNSIM" run --jobs "${JOBS:-2}" --json "$dir/results.json" --trace "$dir/suite.pftrace" "${BENCHES[@]}" \
        >"$WORK/$1.stdout" 2>"$WORK/$1.stderr"; then
        tail -n 20 "$WORK/$1.stderr" >&2
        fail "run $1 failed (output in $WORK/$1.stdout, $WORK/$1.stderr)"
    fi
    t1=$(date +%s.%N)
    sed -n 's|^trace: ||p' "$WORK/$1.stderr" | xargs -r -n1 basename | LC_ALL=C sort >"$WORK/$1.announced"
    (cd "$dir" && find . -maxdepth 1 -type f -name 'suite*.pftrace' -printf '%f\n') | LC_ALL=C sort >"$WORK/$1.files"
    echo "run $1: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s wall," \
        "$(wc -l <"$WORK/$1.files") traces, $(du -sh "$dir" | cut -f1) on disk (load: $(uptime | sed 's/.*load average: //'))"
}

# The checks of one run on its own: traces exist and match what the CLI announced.
check_run() {
    local dir=$WORK/$1 f
    [ -s "$dir/results.json" ] || fail "run $1 wrote no results JSON ($dir/results.json)"
    [ -s "$WORK/$1.files" ] || fail "run $1 wrote no traces at all in $dir"
    if ! diff -u "$WORK/$1.announced" "$WORK/$1.files" >"$WORK/$1.listdiff"; then
        cat "$WORK/$1.listdiff" >&2
        fail "run $1: trace files on disk (+) differ from those the CLI announced as \`trace: PATH\` (-)"
    fi
}

# Byte comparison of one file of the two runs; names the first difference.
compare_file() {
    local f=$1 a=$WORK/a/$1 b=$WORK/b/$1 where
    if ! where=$(cmp -- "$a" "$b" 2>&1); then
        echo "suite-determinism: $f differs: $where" >&2
        case "$f" in
            *.json)
                diff -u "$a" "$b" | sed -n '1,40p' >&2 || true
                ;;
            *)
                echo "first differing bytes (offset, octal a, octal b):" >&2
                cmp -l -- "$a" "$b" 2>/dev/null | sed -n '1,8p' >&2 || true
                ;;
        esac
        fail "the two runs differ, first in $f"
    fi
}

BENCHES=("$@")
if [ ${#BENCHES[@]} -eq 1 ]; then
    # One benchmark: the CLI names its trace suite.pftrace, not suite.NAME.pftrace.
    echo "suite-determinism: give two or more benchmarks, or none for the whole suite" >&2
    exit 2
fi
echo "suite-determinism: $TRNSIM, runs in $WORK, ${BENCHES[*]:-the whole default suite}"
run_suite a
need_kib=$(du -sk "$WORK/a" | cut -f1)
free_kib=$(df -Pk "$WORK" | awk 'NR == 2 { print $4 }')
if [ "$free_kib" -lt $((need_kib + need_kib / 10)) ]; then
    echo "suite-determinism: run a wrote $((need_kib / 1024)) MiB but only $((free_kib / 1024)) MiB are free" \
        "in $WORK; set TMPDIR to a larger disk" >&2
    exit 2
fi
run_suite b
check_run a
check_run b
if ! diff -u "$WORK/a.files" "$WORK/b.files" >"$WORK/files.diff"; then
    cat "$WORK/files.diff" >&2
    fail "the two runs wrote different trace file lists (run a -, run b +)"
fi
compare_file results.json
if [ "${BASELINE:-0}" = 1 ]; then
    scripts/suite-baseline.sh check "$WORK/a/results.json" || fail "results differ from the stored baseline"
fi
while read -r f; do
    compare_file "$f"
done <"$WORK/a.files"

# Benchmarks of `trnsim list` without a trace: by design (not one simulation), listed only.
untraced=()
while read -r name _; do
    [ -n "$name" ] || continue
    safe=$(printf '%s' "$name" | tr -c 'A-Za-z0-9-' '_') # as the CLI names per-benchmark files
    grep -qxF "suite.$safe.pftrace" "$WORK/a.files" || untraced+=("$name")
done < <(if [ ${#BENCHES[@]} -gt 0 ]; then printf '%s\n' "${BENCHES[@]}"; else "$TRNSIM" list; fi)
bytes=$(cd "$WORK/a" && xargs -a "$WORK/a.files" stat -c %s | awk '{ s += $1 } END { print s }')
echo "suite-determinism: results.json and $(wc -l <"$WORK/a.files") traces" \
    "($((bytes / 1048576)) MiB per run) byte-identical across the two runs"
if [ ${#untraced[@]} -gt 0 ]; then
    echo "suite-determinism: no trace (the CLI traces only benchmarks that are one simulation):" \
        "${untraced[*]}"
fi
# Checked last, so that the comparison above is reported either way: an empty trace (the CLI
# opened the file but the benchmark never wrote to it) makes the comparison of that benchmark
# vacuous.
empty=()
while read -r f; do
    [ -s "$WORK/a/$f" ] || empty+=("$f")
done <"$WORK/a.files"
if [ ${#empty[@]} -gt 0 ]; then
    echo "suite-determinism: FAIL: ${#empty[@]} announced trace(s) are empty (0 bytes)," \
        "so the runs' equality says nothing about them: ${empty[*]}" >&2
    exit 1
fi
echo "suite-determinism: OK"
