#!/usr/bin/env bash
# Mutation check of the lock-step diffs: plants one bug at a time in a temporary copy of
# rtl/blocks (lines tagged `// MUT:` in the block's .sv), rebuilds the RTL from that copy
# ($TRNSIM_RTL_BLOCKS), runs the block's diff example (examples/diff_<block>) and requires each
# mutant to be caught. Prints cycles-to-detection per mutant and configuration. Exit status 1
# if one survives.
# Usage: rtl/scripts/mutate.sh [cycles] [seed] [block]   (block: link_fifo, islip, sram_bank;
# default all)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cycles=${1:-1000000}
seed=${2:-1}
only=${3:-}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/../target/h-rtl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# block | name | tag | sed expression applied to the tagged line (block islip = islip_arbiter.sv,
# others <block>.sv)
mutants=(
  "link_fifo|full-off-by-one|MUT:full|s/CW'(DEPTH)/CW'(DEPTH - 1)/"
  "link_fifo|write-dropped-at-full-minus-1|MUT:write|s/if (push)/if (push \&\& cnt != CW'(DEPTH - 1))/"
  "link_fifo|reversed-read-order|MUT:order|s/mem\[rd_ptr\]/mem[PW'((32'(wr_ptr) + DEPTH - 1) % DEPTH)]/"
  "link_fifo|credit-lost-on-push-and-pop|MUT:credit|s/credit_ret <= pop;/credit_ret <= pop \&\& !push;/"
  "link_fifo|reset-keeps-count|MUT:reset|s/cnt <= '0;/cnt <= cnt;/"
  "islip|pointers-updated-every-iteration|MUT:first|s/if (it == 0) begin/if (1) begin/"
  "islip|grant-pointer-not-past-accepted-input|MUT:gptr|s/inc(W'(i))/W'(i)/"
  "islip|round-robin-start-off-by-one|MUT:rrstart|s/32'(start) + k;/32'(start) + k + 1;/"
  "islip|grants-to-already-matched-inputs|MUT:gfree|s/col \& free_in/col/"
  "islip|reset-keeps-accept-pointers|MUT:reset|s/aptr\[k\] <= '0;/aptr[k] <= aptr[k];/"
  "sram_bank|read-granted-beyond-port-count|MUT:ports|s/nr < R/nr <= R/"
  "sram_bank|pointer-not-advanced|MUT:ptr|s/ptr <= ptr_nx;/ptr <= ptr;/"
  "sram_bank|read-returns-old-data-after-same-cycle-write|MUT:wfirst|s/if (grant\[j\] \&\&/if (1'b0 \&\& grant[j] \&\&/"
  "sram_bank|first-write-wins-in-memory|MUT:wlast|s/for (int o = 0; o < REQ; o++) begin/for (int o = REQ - 1; o >= 0; o--) begin/"
  "sram_bank|reset-keeps-pointer|MUT:reset|s/ptr <= '0;/ptr <= ptr;/"
)

run() {
  case $1 in
    # Block 3 has no example: an ignored test in tests/sram_bank.rs is its diff driver.
    sram_bank) SRAM_DIFF_CYCLES=$cycles SRAM_DIFF_SEED=$seed cargo test -q --release --features rtl -p trnsim-rtl \
      --test sram_bank -- --ignored --nocapture --exact rtl::sram_bank_diff_probe 2>&1 ;;
    *) cargo run -q --release --features rtl -p trnsim-rtl --example "diff_$1" -- "$cycles" "$seed" ;;
  esac
}
sv() { case $1 in islip) echo islip_arbiter.sv ;; *) echo "$1.sv" ;; esac; }
blocks=$(printf '%s\n' "${mutants[@]}" | cut -d'|' -f1 | uniq)

cd "$here"
for b in $blocks; do
  [ -n "$only" ] && [ "$only" != "$b" ] && continue
  echo "== unmutated RTL: $b"
  run "$b" || { echo "the unmutated RTL diverges: fix that first"; exit 1; }
done
survivors=0
tried=0
for m in "${mutants[@]}"; do
  IFS='|' read -r block name tag expr <<<"$m"
  [ -n "$only" ] && [ "$only" != "$block" ] && continue
  tried=$((tried + 1))
  file=$(sv "$block")
  rm -rf "$tmp/blocks" && cp -r "$here/blocks" "$tmp/blocks"
  sed -i "/$tag/$expr" "$tmp/blocks/$file"
  if cmp -s "$here/blocks/$file" "$tmp/blocks/$file"; then
    echo "mutant $name did not apply"; exit 1
  fi
  echo "== mutant $block/$name: $(grep "$tag" "$tmp/blocks/$file" | sed 's/^ *//')"
  if out=$(TRNSIM_RTL_BLOCKS="$tmp/blocks" run "$block"); then
    echo "$out"; echo "   SURVIVED"; survivors=$((survivors + 1))
  else
    echo "$out" | grep -E 'DETECTED|divergence at|no divergence|error' || true
  fi
done
echo "== $((tried - survivors)) of $tried mutants caught"
[ "$survivors" -eq 0 ]
