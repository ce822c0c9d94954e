#!/usr/bin/env bash
# json-option.sh OUT.json BENCHMARK [ARGS...]: runs BENCHMARK ARGS --json OUT.json (as
# .gpu/run-gpu-tests --bench --out does) and passes when it exits 0 and OUT.json is a JSON document.
set -u
out=$1; shift
rm -f "$out"
"$@" --json "$out" >/dev/null
status=$?
[ $status -eq 0 ] || { echo "FAIL: exit $status from: $* --json $out"; exit 1; }
[ -s "$out" ] || { echo "FAIL: $out not written by: $*"; exit 1; }
if command -v python3 >/dev/null; then
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$out" || { echo "FAIL: $out is not JSON"; exit 1; }
fi
[ ! -e "$out.part" ] || { echo "FAIL: temporary $out.part left behind"; exit 1; }
echo "ok: $(basename "$1") wrote $out ($(wc -c <"$out") bytes)"
