#!/usr/bin/env bash
# expect-error.sh REGEX COMMAND...: passes when COMMAND exits with a plain error (1..125, not a crash
# or signal), prints exactly one error line on stderr (besides warnings and progress) matching REGEX, and leaves its
# outputs as they were: every path given to an output option (--output, --out, --out-image,
# --out-label, --mesh, --probability, --snapshot, --report, --json) that did not exist before must not
# exist after, one that existed (a folder, or the input itself) must be unchanged, and no temporary
# file (.NAME.tmp-PID...) may be left beside any of them.
set -u
regex=$1; shift
command_line="$*"
outputs=()
prev=""
for arg in "$@"; do
  case $prev in
    --output | --out | --out-image | --out-label | --mesh | --probability | --snapshot | --report | --json)
      outputs+=("$arg") ;;
  esac
  prev=$arg
done
fingerprint() { # what must not change about a path that existed before the run
  if [ -d "$1" ]; then ls -lA --time-style=+%s.%N "$1"; else cksum <"$1"; stat -c %Y.%y "$1"; fi
}
before=()
for out in "${outputs[@]}"; do
  if [ -e "$out" ]; then before+=("$(fingerprint "$out")"); else before+=(absent); fi
done

stderr=$(mktemp)
"$@" 2>"$stderr" >/dev/null
status=$?
# Progress bars, warnings and CLI11's "Run with --help" hint are not error lines.
message=$(grep -a -v -e '^Run with --help' -e '\] *[0-9]*% ' -e '^canopy: warning: ' "$stderr"); rm -f "$stderr"
fail() { echo "FAIL: $1 from: $command_line"; echo "--- stderr:"; echo "$message"; exit 1; }
if [ $status -eq 0 ] || [ $status -gt 125 ]; then
  fail "exit status $status (expected a clean error, 1..125)"
fi
if ! grep -qE -- "$regex" <<<"$message"; then
  fail "stderr does not match '$regex'"
fi
lines=$(grep -c . <<<"$message")
if [ "$lines" -ne 1 ]; then
  fail "$lines lines on stderr (expected one error line)"
fi
for i in "${!outputs[@]}"; do
  out=${outputs[$i]}
  if [ "${before[$i]}" = absent ]; then
    [ -e "$out" ] && fail "output $out was written despite the error"
  elif [ "$(fingerprint "$out")" != "${before[$i]}" ]; then
    fail "$out existed before and was changed"
  fi
  folder=$(dirname -- "$out")
  base=$(basename -- "$out")
  stem=${base%%.*}
  if [ -d "$folder" ] && compgen -G "$folder/.$stem.tmp-*" >/dev/null; then
    fail "a temporary file of $out was left: $(echo "$folder"/."$stem".tmp-*)"
  fi
done
echo "ok: exit $status: $message"
