#!/usr/bin/env bash
# The default suite item by item: each benchmark `trnsim list` names runs in its own process
# (`trnsim run NAME --json FILE`) under `/usr/bin/time -f '%e %M %U %S'`, and a markdown table
# goes to stdout: simulated time and ticks (the kernel statistics `kernel.sim_time_ps` and
# `kernel.ticks` of the result JSON), wall seconds, CPU seconds (user + system: the steadier
# figure on a shared host), slowdown (wall / simulated) and peak RSS.
# Benchmarks added to the suite later are picked up from `trnsim list`.
#
# Wall time is the whole process (start, build, run, report; measured around it to the
# millisecond, /usr/bin/time's own %e has 10 ms steps), best of REPS runs, and CPU time that
# run's; peak RSS is /usr/bin/time's %M, the largest of the REPS runs. A benchmark without kernel statistics
# (packet-level fabric engines, analytic benchmarks) shows "-" for simulated time, slowdown and
# ticks. A sweep (several simulations in one benchmark) reports the kernel statistics of its
# last simulation only, so its slowdown is overstated.
#
# Usage: scripts/suite-profile.sh [NAME...]       (default: every benchmark of `trnsim list`)
# Env:   TRNSIM  the binary (default target/release/trnsim of the repo; relative: to the caller)
#        REPS    runs per benchmark (default 3)
# Exit:  0 table printed; 1 a benchmark failed; 2 setup error.
# Installs Debian's `time` and `jq` with apt-get when missing.
set -euo pipefail

# shellcheck source=lib/trnsim-binary.sh
. "$(dirname "$0")/lib/trnsim-binary.sh" suite-profile
REPS=${REPS:-3}
case "$REPS" in
    '' | *[!0-9]* | 0) echo "suite-profile: REPS=$REPS is not a positive integer" >&2; exit 2 ;;
esac
if [ ! -x /usr/bin/time ] || ! command -v jq >/dev/null 2>&1; then
    echo "suite-profile: installing Debian's time and jq" >&2
    apt-get update -qq && apt-get install -y -qq --no-install-recommends time jq
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/trnsim-profile.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if [ $# -gt 0 ]; then
    names=("$@")
else
    mapfile -t names < <("$TRNSIM" list | awk 'NF { print $1 }')
fi
[ ${#names[@]} -gt 0 ] || { echo "suite-profile: \`$TRNSIM list\` named no benchmarks" >&2; exit 2; }

# 12345678.9 -> 12,345,679 (integers with thousands separators; awk printf has no ' flag).
group() {
    awk -v x="$1" 'BEGIN {
        s = sprintf("%.0f", x); o = ""
        while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) }
        print s o
    }'
}

# Runs one benchmark REPS times; prints "wall_ms rss_kib cpu_s" (best wall and its CPU time,
# largest RSS).
measure() {
    local name=$1 i t0 t1 best="" cpu="" rss=0 e m u s
    for ((i = 1; i <= REPS; i++)); do
        t0=$(date +%s%N)
        if ! /usr/bin/time -f '%e %M %U %S' -o "$WORK/time" \
            "$TRNSIM" run "$name" --json "$WORK/$name.json" >"$WORK/out" 2>"$WORK/err"; then
            tail -n 20 "$WORK/err" >&2
            echo "suite-profile: \`$TRNSIM run $name\` failed" >&2
            return 1
        fi
        t1=$(date +%s%N)
        read -r e m u s < <(tail -n 1 "$WORK/time")
        [ -n "$m" ] || { echo "suite-profile: /usr/bin/time wrote no figures for $name" >&2; return 1; }
        e=$(((t1 - t0) / 1000000))
        if [ -z "$best" ] || [ "$e" -lt "$best" ]; then
            best=$e
            cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
        fi
        if [ "$m" -gt "$rss" ]; then rss=$m; fi
    done
    echo "$best $rss $cpu"
}

load() { uptime | sed 's/.*load average: //'; }

echo "suite-profile: $TRNSIM, ${#names[@]} benchmarks, best of $REPS; load before: $(load)" >&2
echo "| benchmark | simulated | wall s | CPU s | slowdown (wall / simulated) | peak RSS MiB | ticks |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for name in "${names[@]}"; do
    read -r wall_ms rss_kib cpu_s < <(measure "$name") || exit 1
    [ -n "${rss_kib:-}" ] || exit 1
    json=$WORK/$name.json
    sim_ps=$(jq -r --arg n "$name" \
        '.benchmarks[] | select(.name == $n) | .stats.owners.kernel.sim_time_ps // empty' "$json")
    ticks=$(jq -r --arg n "$name" \
        '.benchmarks[] | select(.name == $n) | .stats.owners.kernel.ticks // empty' "$json")
    wall=$(awk -v ms="$wall_ms" 'BEGIN { printf "%.3f", ms / 1000 }')
    rss=$(awk -v k="$rss_kib" 'BEGIN { printf "%.1f", k / 1024 }')
    if [ -n "$sim_ps" ] && [ "$sim_ps" -gt 0 ]; then
        sim=$(awk -v p="$sim_ps" 'BEGIN { printf "%.3f us", p / 1e6 }')
        slow=$(group "$(awk -v ms="$wall_ms" -v p="$sim_ps" 'BEGIN { print (ms / 1e3) / (p / 1e12) }')")
        ticks=$(group "$ticks")
    else
        sim="-" slow="-" ticks="-"
    fi
    echo "| $name | $sim | $wall | $cpu_s | $slow | $rss | $ticks |"
    echo "suite-profile: $name done (load: $(load))" >&2
done
echo "suite-profile: load after: $(load)" >&2
