#!/usr/bin/env bash
# The harness above the benchmarks crate, and no circle of imports among either crate's
# modules: `cargo tree` shows the crates' order, then the integration test
# harness_and_benchmarks_depend_one_way reads every file's `crate::` paths into a module
# graph and fails on a cycle, and on a `pub use` of a lower crate in the harness (a module is
# named by the crate that owns it, not re-exported). Exit 0 when all hold.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}

echo "trnsim-harness, and the crates of ours it uses directly (cargo tree):"
$CARGO tree -p trnsim-harness -e normal --depth 1 --prefix depth | grep -E '^[01]trnsim-'
if ! $CARGO tree -p trnsim-harness -e normal --depth 1 --prefix none | grep -q '^trnsim-benchmarks '; then
    echo "check-layers: trnsim-harness does not use trnsim-benchmarks" >&2
    exit 1
fi
if $CARGO tree -p trnsim-benchmarks -e normal --prefix none | grep -q '^trnsim-harness '; then
    echo "check-layers: trnsim-benchmarks depends on trnsim-harness (it must sit below it)" >&2
    exit 1
fi
echo "trnsim-benchmarks uses no trnsim-harness: the harness is above it."
if $CARGO tree -p trnsim-kernels -e normal --prefix none | grep -qE '^trnsim-(benchmarks|harness) '; then
    echo "check-layers: trnsim-kernels depends on trnsim-benchmarks or trnsim-harness (it must sit below both)" >&2
    exit 1
fi
echo "trnsim-kernels uses neither: the kernel library is below the benchmarks."
$CARGO test -p trnsim-tests --test integration harness_and_benchmarks_depend_one_way
