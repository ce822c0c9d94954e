#!/usr/bin/env bash
# run-fuzzer.sh FUZZER SECONDS WORKDIR SEED_CORPUS [DICT]: runs a libFuzzer target for SECONDS on
# WORKDIR/corpus (new inputs) plus the committed seeds (read only), with the target's own stderr
# closed (ITK's readers print every parse error; sanitizer reports still show); crashes land in WORKDIR as
# crash-*/leak-*/timeout-*/oom-* and fail the run. Prints libFuzzer's final statistics.
set -euo pipefail
fuzzer=$1 seconds=$2 work=$3 seeds=$4 dict=${5:-}
mkdir -p "$work/corpus"
args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -close_fd_mask=2
  -artifact_prefix="$work/")
[ -n "$dict" ] && args+=(-dict="$dict")
export LSAN_OPTIONS=suppressions=$(dirname "$0")/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
exec "$fuzzer" "${args[@]}" "$work/corpus" "$seeds" </dev/null
