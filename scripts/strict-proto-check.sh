#!/usr/bin/env bash
# Strict wire-format check of Perfetto protobuf traces (.pftrace, optionally .gz), independent
# of Perfetto's own lenient decoder: every trace is decoded by protoc as perfetto.protos.Trace,
# and the check fails if protoc rejects it or prints any field it does not know (a bare field
# number such as `47: 0x...`, which is how a wrong wire type or field number shows up, e.g.
# flow ids written as varints instead of fixed64).
#
# Schema: the PyPI package perfetto==0.59.1 (sha256-pinned) ships no .proto files and no
# descriptor file for the trace protos, but its perfetto_trace_pb2.py embeds the serialized
# FileDescriptorProto of the merged, import-free protos/perfetto/trace/perfetto_trace.proto.
# This script extracts it once into a FileDescriptorSet (target/strict-proto/) for
# `protoc --descriptor_set_in`. protoc comes from Debian's protobuf-compiler, installed with
# apt-get if missing. Only PyPI and Debian are contacted, and only on first use.
#
# Usage: scripts/strict-proto-check.sh TRACE...
# Env:   STRICT_PROTO_DIR (default target/strict-proto): cache for the wheel, descriptor, output.
# Exit:  0 all traces pass; 1 a trace fails; 2 usage or setup error.
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 TRACE..." >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${STRICT_PROTO_DIR:-$ROOT/target/strict-proto}
WHEEL_VERSION=0.59.1
WHEEL_SHA256=fde529ecdf28042112d452ed431d51b797b4eea1378c10d7d25af5d36db719a3
DESC=$WORK/perfetto-trace-$WHEEL_VERSION.desc
mkdir -p "$WORK"

if ! command -v protoc >/dev/null 2>&1; then
    echo "strict-proto-check: protoc not found; installing Debian's protobuf-compiler" >&2
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
    $SUDO apt-get install -y -qq protobuf-compiler >/dev/null 2>&1 ||
        { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq protobuf-compiler >/dev/null; } ||
        { echo "strict-proto-check: cannot install protobuf-compiler" >&2; exit 2; }
fi

if [ ! -s "$DESC" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "perfetto==$WHEEL_VERSION" ||
        { echo "strict-proto-check: cannot download perfetto==$WHEEL_VERSION from PyPI" >&2; exit 2; }
    whl=$(ls "$tmp"/perfetto-"$WHEEL_VERSION"-*.whl)
    echo "$WHEEL_SHA256  $whl" | sha256sum -c --quiet ||
        { echo "strict-proto-check: $whl does not match the pinned sha256" >&2; exit 2; }
    python3 - "$whl" "$DESC.tmp" <<'PY'
import ast, sys, zipfile
whl, out = sys.argv[1:]
src = zipfile.ZipFile(whl).read('perfetto/protos/perfetto/trace/perfetto_trace_pb2.py').decode()
blobs = [n.args[0].value for n in ast.walk(ast.parse(src))
         if isinstance(n, ast.Call) and getattr(n.func, 'attr', '') == 'AddSerializedFile']
if len(blobs) != 1:
    sys.exit('expected one serialized FileDescriptorProto in perfetto_trace_pb2.py')
def varint(n):
    out = bytearray()
    while True:
        out.append((n & 0x7f) | (0x80 if n > 0x7f else 0))
        n >>= 7
        if not n:
            return bytes(out)
# FileDescriptorSet { repeated FileDescriptorProto file = 1; }
open(out, 'wb').write(b'\x0a' + varint(len(blobs[0])) + blobs[0])
PY
    mv "$DESC.tmp" "$DESC"
fi

status=0
for trace in "$@"; do
    text=$WORK/$(basename "$trace").txt
    if [[ "$trace" == *.gz ]]; then reader=(gzip -dc "$trace"); else reader=(cat "$trace"); fi
    if ! "${reader[@]}" | protoc --decode=perfetto.protos.Trace --descriptor_set_in="$DESC" >"$text" 2>"$text.err"; then
        echo "FAIL $trace: protoc cannot decode it as perfetto.protos.Trace: $(head -c 300 "$text.err")" >&2
        status=1
        continue
    fi
    if grep -nE '^\s*[0-9]+:' "$text" >"$text.unknown"; then
        echo "FAIL $trace: $(wc -l <"$text.unknown") unknown fields (wrong field number or wire type), first ones:" >&2
        head -5 "$text.unknown" >&2
        status=1
        continue
    fi
    packets=$(grep -c '^packet {' "$text" || true)
    echo "ok $trace: $packets packets, no unknown fields"
done
exit $status
