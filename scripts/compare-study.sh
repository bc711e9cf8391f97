#!/usr/bin/env bash
# The system comparison of docs/whatif.md: a dense tensor-parallel layer and an MoE layer
# (inference forward pass, and the dense one as a training step) on the Trn2 64-chip torus,
# the Trn3 Gen1 64-chip and the Trn3 Gen2 144-chip UltraServers, side by side, by the roofline
# (--compute roofline: the figures docs/whatif.md's table shows).
# Usage: scripts/compare-study.sh [OUT_DIR]   (default traces/out/study; about a minute after
# `cargo build --release -p trnsim-harness`; TRNSIM=path picks another binary)
set -euo pipefail
OUT=${1:-traces/out/study}
case "$OUT" in /*) ;; *) OUT=$PWD/$OUT ;; esac
source "$(dirname "$0")/lib/trnsim-binary.sh" compare-study.sh
mkdir -p "$OUT"
T=$TRNSIM
"$T" workload llm --arch dense --layers 2 --hidden 8192 --ffn 28672 --heads 64 --seq 2048 --batch 8 \
  --tp 8 --dp 8 -o "$OUT/dense-tp8-dp8.ron"
"$T" workload llm --arch dense --layers 2 --hidden 8192 --ffn 28672 --heads 64 --seq 2048 --batch 8 \
  --tp 8 --dp 8 --train -o "$OUT/dense-tp8-dp8-train.ron"
"$T" workload llm --arch moe --layers 2 --hidden 4096 --ffn 8192 --heads 32 --experts 64 --top-k 2 \
  --seq 2048 --batch 64 --tp 1 --dp 64 --ep 64 -o "$OUT/moe-ep64.ron"
for w in dense-tp8-dp8 dense-tp8-dp8-train moe-ep64; do
  echo "== $w"
  "$T" compare --workload "$OUT/$w.ron" --system trn2-ultraserver --system trn3-gen1-ultraserver \
    --system trn3-gen2-ultraserver --compute roofline --collectives --json "$OUT/$w.json" --plots "$OUT"
done
