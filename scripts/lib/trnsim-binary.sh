# Sourced by the suite scripts: sets TRNSIM to the trnsim binary to run and cds to the repo root.
# A TRNSIM given relative is relative to the caller's directory; the default is the repo's
# target/release/trnsim. Exits 2, naming the caller ($1), when it is not an executable.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
case "${TRNSIM:-}" in
    '') TRNSIM=$ROOT/target/release/trnsim ;;
    /*) ;;
    *) TRNSIM=$PWD/$TRNSIM ;;
esac
cd "$ROOT"
if [ ! -x "$TRNSIM" ]; then
    echo "$1: $TRNSIM is not an executable; build it with" \
        "\`cargo build --release -p trnsim-harness\` or set TRNSIM" >&2
    exit 2
fi
