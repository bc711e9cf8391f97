#!/usr/bin/env bash
# Mutation check of the link FIFO diff: plants one bug at a time in a temporary copy of
# rtl/blocks (lines tagged `// MUT:` in link_fifo.sv), rebuilds the RTL from that copy
# ($TRNSIM_RTL_BLOCKS), runs the lock-step diff and requires each mutant to be caught.
# Prints cycles-to-detection per mutant and configuration. Exit status 1 if one survives.
# Usage: rtl/scripts/mutate.sh [cycles] [seed]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cycles=${1:-1000000}
seed=${2:-1}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/../target/h-rtl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# name | tag | sed expression applied to the tagged line
mutants=(
  "full-off-by-one|MUT:full|s/CW'(DEPTH)/CW'(DEPTH - 1)/"
  "write-dropped-at-full-minus-1|MUT:write|s/if (push)/if (push \&\& cnt != CW'(DEPTH - 1))/"
  "reversed-read-order|MUT:order|s/mem\[rd_ptr\]/mem[PW'((32'(wr_ptr) + DEPTH - 1) % DEPTH)]/"
  "credit-lost-on-push-and-pop|MUT:credit|s/credit_ret <= pop;/credit_ret <= pop \&\& !push;/"
  "reset-keeps-count|MUT:reset|s/cnt <= '0;/cnt <= cnt;/"
)

run() { cargo run -q --release --features rtl -p trnsim-rtl --example diff_link_fifo -- "$cycles" "$seed"; }

cd "$here"
echo "== unmutated RTL"
run || { echo "the unmutated RTL diverges: fix that first"; exit 1; }
survivors=0
for m in "${mutants[@]}"; do
  IFS='|' read -r name tag expr <<<"$m"
  rm -rf "$tmp/blocks" && cp -r "$here/blocks" "$tmp/blocks"
  sed -i "/$tag/$expr" "$tmp/blocks/link_fifo.sv"
  if cmp -s "$here/blocks/link_fifo.sv" "$tmp/blocks/link_fifo.sv"; then
    echo "mutant $name did not apply"; exit 1
  fi
  echo "== mutant $name: $(grep "$tag" "$tmp/blocks/link_fifo.sv" | sed 's/^ *//')"
  if out=$(TRNSIM_RTL_BLOCKS="$tmp/blocks" run); then
    echo "$out"; echo "   SURVIVED"; survivors=$((survivors + 1))
  else
    echo "$out" | grep -E 'DETECTED|divergence at|error|no divergence' || true
  fi
done
echo "== $((${#mutants[@]} - survivors)) of ${#mutants[@]} mutants caught"
[ "$survivors" -eq 0 ]
