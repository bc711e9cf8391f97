#!/usr/bin/env bash
# The benchmarks against their workload forms (docs/whatif.md, "The benchmarks as
# workloads"): each benchmark run as one whole-system cycle-level simulation, then written by
# `trnsim workload bench NAME` and run by `trnsim run --workload FILE --compute cycle` on the
# benchmark's system; prints both simulated times, their difference and the CPU time of each.
# Usage: scripts/bench-as-workloads.sh [OUT_DIR] [NAME...]   (default traces/out/bench-workloads
# and every benchmark with a workload form; a few minutes after `cargo build --release -p
# trnsim-harness`; TRNSIM=path picks another binary)
set -euo pipefail
OUT=${1:-traces/out/bench-workloads}
shift || true
case "$OUT" in /*) ;; *) OUT=$PWD/$OUT ;; esac
source "$(dirname "$0")/lib/trnsim-binary.sh" bench-as-workloads.sh
mkdir -p "$OUT"
T=$TRNSIM
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=(e2e-llm-layer tp-matmul-4 tp-matmul-16 tp-matmul-64 moe-alltoall-144)
cpu() { /usr/bin/env time -f %U+%S "$@" 2>&1 >/dev/null | tail -1 | bc; }
figure() { # FILE.json KEY: the first figure named KEY in a results file
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); k=sys.argv[2]
rows=[h for b in d.get("benchmarks",[]) for h in b["headline"]]+[h for p in d.get("points",[]) for h in p["figures"]]
print(next(v for n,v in rows if n==k))' "$1" "$2"
}
printf '%-18s %16s %16s %8s %10s %10s\n' benchmark "benchmark (us)" "workload (us)" diff "bench CPU-s" "wl CPU-s"
for n in "${NAMES[@]}"; do
  sys=$("$T" workload bench "$n" -o "$OUT/$n.ron" 2>&1 | sed -n 's/.*--system \([^ ]*\)$/\1/p')
  rm -f "$OUT/$n.bench.json" "$OUT/$n.workload.json"
  bcpu=$(cpu "$T" run "$n" --json "$OUT/$n.bench.json")
  wcpu=$(cpu "$T" run --workload "$OUT/$n.ron" --system "$sys" --compute cycle --json "$OUT/$n.workload.json")
  b=$(figure "$OUT/$n.bench.json" sim_time_ns)
  w=$(figure "$OUT/$n.workload.json" step_us)
  python3 -c "import sys; b=float(sys.argv[2])/1e3; w=float(sys.argv[3]); print('%-18s %16.3f %16.3f %+7.1f%% %10s %10s' % (sys.argv[1], b, w, 100*(w/b-1), sys.argv[4], sys.argv[5]))" \
    "$n" "$b" "$w" "$bcpu" "$wcpu"
done
