#!/usr/bin/env bash
# run-fuzzer.sh FUZZER SECONDS WORKDIR SEED_CORPUS [DICT]: runs a libFuzzer target for SECONDS on
# WORKDIR/corpus (new inputs) plus the committed seeds (read only), with the target's own stderr
# closed (ITK's readers print every parse error; sanitizer reports still show); crashes land in WORKDIR as
# crash-*/leak-*/timeout-*/oom-* and fail the run. Prints libFuzzer's final statistics.
# The mutation sequence is seeded with CANOPY_FUZZ_SEED (default 1) so that a test run is repeatable:
# CI fails on the code, not on the luck of the draw. CANOPY_FUZZ_SEED=0 lets libFuzzer pick a seed
# (exploration: `CANOPY_FUZZ_SEED=0 scripts/fuzz 600`); a finding is then added to the seed corpus.
# RUNS (optional 6th argument) is used when CANOPY_FUZZ_CI is set (scripts/test sets it): the run stops
# after RUNS inputs, so with the fixed seed every machine executes the same inputs (a prefix of what
# was checked here), and SECONDS x 3 only caps a slow machine's time.
set -euo pipefail
fuzzer=$1 seconds=$2 work=$3 seeds=$4 dict=${5:-} runs=${6:-0}
mkdir -p "$work/corpus"
total=$seconds
if [ -n "${CANOPY_FUZZ_CI:-}" ] && [ "$runs" -gt 0 ]; then
  total=$((seconds * 3))
fi
args=(-seed="${CANOPY_FUZZ_SEED:-1}" -max_total_time="$total" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -close_fd_mask=2
  -artifact_prefix="$work/")
[ -n "$dict" ] && args+=(-dict="$dict")
if [ -n "${CANOPY_FUZZ_CI:-}" ] && [ "$runs" -gt 0 ]; then
  args+=(-runs="$runs")
fi
export LSAN_OPTIONS=suppressions=$(dirname "$0")/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
exec "$fuzzer" "${args[@]}" "$work/corpus" "$seeds" </dev/null
