#!/usr/bin/env bash
# Mutation check of the lock-step diffs: plants one bug at a time in a temporary copy of
# rtl/blocks (lines tagged `// MUT:` in the block's .sv), rebuilds the RTL from that copy
# ($TRNSIM_RTL_BLOCKS), runs the block's diff example (examples/diff_<block>) and requires each
# mutant to be caught. Prints cycles-to-detection per mutant and configuration. Exit status 1
# if one survives.
# Usage: rtl/scripts/mutate.sh [cycles] [seed] [block]   (block: link_fifo, islip, sram_bank;
# systolic_tile, hbm_bank, dma_queue, replay_buf, sbuf_bank; default all)
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
  "systolic_tile|sum-ties-round-away-from-zero|MUT:rne|s/(lo3 == 4 \&\& mant\[0\])/(lo3 == 4)/"
  "systolic_tile|alignment-sticky-bit-dropped|MUT:sticky|s/else al = (sv >> d) | /else al = (sv >> d) | 32'b0 \& /"
  "systolic_tile|subnormal-products-flushed-to-zero|MUT:ftz|s/sh = 119 - xa - xb;/sh = 20;/"
  "systolic_tile|inf-minus-inf-not-nan|MUT:infnan|s/a\[31\] != b\[31\]/1'b0/"
  "systolic_tile|psum-valid-ignores-the-pe-above|MUT:pvalid|s/av_in \&\& pv_in/av_in/"
  "systolic_tile|x-minus-x-gives-negative-zero|MUT:zsign|s/return 32'h0;/return {s, 31'b0};/"
  "systolic_tile|swap-misses-same-cycle-load|MUT:swap|s/(w_load \&\& 32'(w_row) == r) ? w_data\[c\*16+:16\] : ws\[r\]\[c\]/ws[r][c]/"
  "hbm_bank|twr-without-write-latency|MUT:twr|s/CWL + BL + WR;/WR;/"
  "hbm_bank|rd-waits-trcdwr-not-trcdrd|MUT:trcd|s/return RCD_RD;/return RCD_WR;/"
  "hbm_bank|rda-to-act-misses-trtp|MUT:rda|s/RDA_TO_ACT : 0;/RP : 0;/"
  "hbm_bank|act-to-open-bank-allowed|MUT:actopen|s/(c == ACT || c == REFPB) \&\& is_open/c == REFPB \&\& is_open/"
  "hbm_bank|illegal-commands-applied|MUT:ignore|s/cmd != NOP \&\& legal\[cmd\]/cmd != NOP/"
  "hbm_bank|refreshing-state-one-cycle-short|MUT:refcnt|s/bump(ref_cnt, REF_TO_ACT)/bump(ref_cnt, REF_TO_ACT - 1)/"
  "dma_queue|start-latency-ignored|MUT:elig|s/ \&\& wait_m\[q\]\[head\[q\]\] == 0//"
  "dma_queue|start-latency-one-cycle-short|MUT:lat|s/LW'(LAT - 1)/LW'(LAT - 2)/"
  "dma_queue|round-robin-start-off-by-one|MUT:rrstart|s/32'(ptr\[c\]) + k/32'(ptr[c]) + k + 1/"
  "dma_queue|priority-class-ignored|MUT:class|s/ \&\& cls(q) == c//"
  "dma_queue|pointer-not-past-the-winner|MUT:ptr|s/QW'((sel + 1) % Q)/QW'(sel)/"
  "dma_queue|part-retired-one-packet-early|MUT:last|s/) + 1 == (NW + 1)/) + 2 == (NW + 1)/"
  "dma_queue|full-one-descriptor-early|MUT:full|s/cnt\[enq_queue\] != CW'(D)/cnt[enq_queue] != CW'(D - 1)/"
  "dma_queue|reset-keeps-counts|MUT:reset|s/cnt\[q\]  <= '0;/cnt[q]  <= cnt[q];/"
  "replay_buf|stale-ack-purges|MUT:stale|s/ \&\& 32'(d) < HALF//"
  "replay_buf|ack-keeps-the-acked-unit|MUT:ackthrough|s/32'(d) + 1;/32'(d);/"
  "replay_buf|replay-position-not-shifted-by-ack|MUT:rpshift|s/32'(rp) - purge : 0/32'(rp) : 0/"
  "replay_buf|replay-timer-one-cycle-late|MUT:timer|s/age <= AW'(1)/age <= AW'(0)/"
  "replay_buf|new-unit-beyond-capacity|MUT:cap|s/cnt1 < CAP/cnt1 <= CAP/"
  "replay_buf|replay-runs-past-the-newest|MUT:rpend|s/rp1 + 1 < cnt1/rp1 + 1 <= cnt1/"
  "replay_buf|reset-keeps-sequence-number|MUT:reset|s/hs  <= '0;/hs  <= hs;/"
  "sbuf_bank|read-granted-beyond-port-count|MUT:rports|s/~rl\[R-1\]/~rl[R]/"
  "sbuf_bank|refused-slot-takes-ports-where-room|MUT:partial|s/take = fits ? need : '0;/take = need \& room;/"
  "sbuf_bank|only-first-group-checked|MUT:first|s/(need \& ~room) == '0/(need \& ~room \& (G'(1) << req_first[k*GW+:GW])) == '0/"
  "sbuf_bank|last-group-left-out|MUT:range|s/(32'(req_last\[k\*GW+:GW\]) + 1)/(32'(req_last[k*GW+:GW]))/"
  "sbuf_bank|writes-also-take-read-ports|MUT:wtake|s/take_r = req_write\[k\] ? '0 : take;/take_r = take;/"
  "sbuf_bank|refused-writes-not-counted|MUT:wstall|s/else refused = refused + 1;/else if (!req_write[k]) refused = refused + 1;/"
  "sbuf_bank|stall-count-counts-cycles-not-refusals|MUT:count|s/cnt + refused;/cnt + 32'(refused != 0);/"
  "sbuf_bank|grants-during-reset|MUT:rstgrant|s/if (req_valid\[k\] \&\& !rst) begin/if (req_valid[k]) begin/"
  "sbuf_bank|reset-keeps-stall-count|MUT:reset|s/cnt <= '0;/cnt <= cnt;/"
)

run() {
  case $1 in
    # Block 3 has no example: an ignored test in tests/sram_bank.rs is its diff driver.
    sram_bank) SRAM_DIFF_CYCLES=$cycles SRAM_DIFF_SEED=$seed cargo test -q --release --features rtl -p trnsim-rtl \
      --test all -- --ignored --nocapture --exact sram_bank::rtl::sram_bank_diff_probe 2>&1 ;;
    # Blocks 4 and 5 likewise (tests/systolic_tile.rs, tests/hbm_bank.rs).
    systolic_tile) TILE_DIFF_CYCLES=$cycles TILE_DIFF_SEED=$seed cargo test -q --release --features rtl -p trnsim-rtl \
      --test all -- --ignored --nocapture --exact systolic_tile::rtl::systolic_tile_diff_probe 2>&1 ;;
    hbm_bank) HBM_DIFF_CYCLES=$cycles HBM_DIFF_SEED=$seed cargo test -q --release --features rtl -p trnsim-rtl \
      --test all -- --ignored --nocapture --exact hbm_bank::rtl::hbm_bank_diff_probe 2>&1 ;;
    # Block 6 likewise (tests/dma_queue.rs).
    dma_queue) DMAQ_DIFF_CYCLES=$cycles DMAQ_DIFF_SEED=$seed cargo test -q --release --features rtl -p trnsim-rtl \
      --test all -- --ignored --nocapture --exact dma_queue::rtl::dma_queue_diff_probe 2>&1 ;;
    # Block 7 likewise (tests/replay_buf.rs).
    replay_buf) REPLAY_DIFF_CYCLES=$cycles REPLAY_DIFF_SEED=$seed cargo test -q --release --features rtl -p trnsim-rtl \
      --test all -- --ignored --nocapture --exact replay_buf::rtl::replay_buf_diff_probe 2>&1 ;;
    # Block 8 likewise (tests/sbuf_bank.rs).
    sbuf_bank) SBUF_DIFF_CYCLES=$cycles SBUF_DIFF_SEED=$seed cargo test -q --release --features rtl -p trnsim-rtl \
      --test all -- --ignored --nocapture --exact sbuf_bank::rtl::sbuf_bank_diff_probe 2>&1 ;;
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
