#!/usr/bin/env bash
# Compare trnsim's kernel-ring benchmark against the SystemC reference model
# (scripts/systemc/ring.cpp). Both run single-threaded on the same configs;
# hop counts must be identical, and the table reports hops per CPU-second.
#
# Env: CYCLES (default 1000000), TRNSIM (default target/release/trnsim).
# Exit: 0 ok, 1 trnsim binary missing, 2 hop-count mismatch, other = error.
set -euo pipefail

cd "$(dirname "$0")/.."
CYCLES="${CYCLES:-1000000}"
TRNSIM="${TRNSIM:-target/release/trnsim}"
RING=target/systemc-ring
OUT=target/systemc-compare
MODULES=64
DEPTH=4
TOKEN_CONFIGS=(16 2)

if [[ ! -f /usr/include/systemc.h ]]; then
    echo "SystemC headers not found: installing libsystemc-dev with apt-get..." >&2
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO=sudo
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq libsystemc-dev
fi

mkdir -p "$OUT"
echo "building $RING" >&2
make -s -C scripts/systemc OUT="$PWD/$RING" >&2

PIN=()
if command -v taskset >/dev/null 2>&1; then PIN=(taskset -c 0); fi
export SC_COPYRIGHT_MESSAGE=DISABLE

have_trnsim=1
if [[ ! -x "$TRNSIM" ]]; then
    echo "trnsim binary '$TRNSIM' not found (cargo build --release?); SystemC figures only" >&2
    have_trnsim=0
fi

for t in "${TOKEN_CONFIGS[@]}"; do
    args=(--modules "$MODULES" --tokens "$t" --depth "$DEPTH" --cycles "$CYCLES")
    echo "running systemc ${args[*]}" >&2
    "${PIN[@]}" "$RING" "${args[@]}" > "$OUT/systemc-t$t.json"
    if (( have_trnsim )); then
        echo "running trnsim ${args[*]}" >&2
        rm -f "$OUT/trnsim-t$t.json"
        "${PIN[@]}" "$TRNSIM" bench kernel-ring "${args[@]}" --json "$OUT/trnsim-t$t.json" >&2
    fi
done

python3 - "$OUT" "$have_trnsim" "$MODULES" "$DEPTH" "$CYCLES" "${TOKEN_CONFIGS[@]}" <<'EOF'
import json, sys
out, have, modules, depth, cycles = sys.argv[1], sys.argv[2] == "1", *sys.argv[3:6]
ok = True
print(f"{'config':<28} {'SystemC hops/CPU-s':>19} {'trnsim hops/CPU-s':>18} {'trnsim/SC':>9}  hops")
for t in sys.argv[6:]:
    cfg = f"m{modules} t{t} d{depth} c{cycles}"
    sc = json.load(open(f"{out}/systemc-t{t}.json"))
    if not have:
        print(f"{cfg:<28} {sc['hops_per_cpu_s']:>19,.0f} {'-':>18} {'-':>9}  systemc={sc['hops']}")
        continue
    rs = json.load(open(f"{out}/trnsim-t{t}.json"))
    ratio = rs["hops_per_cpu_s"] / sc["hops_per_cpu_s"] if sc["hops_per_cpu_s"] else float("nan")
    same = rs["hops"] == sc["hops"] and rs["payload_sum"] == sc["payload_sum"]
    ok &= same
    verdict = f"agree ({sc['hops']})" if same else (
        f"*** MISMATCH *** systemc hops={sc['hops']} sum={sc['payload_sum']}"
        f" trnsim hops={rs['hops']} sum={rs['payload_sum']}")
    print(f"{cfg:<28} {sc['hops_per_cpu_s']:>19,.0f} {rs['hops_per_cpu_s']:>18,.0f} {ratio:>8.2f}x  {verdict}")
if not ok:
    print("\n!!! HOP COUNT MISMATCH between trnsim and SystemC: the models disagree !!!")
    sys.exit(2)
sys.exit(0 if have else 1)
EOF
