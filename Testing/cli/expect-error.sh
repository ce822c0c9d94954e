#!/usr/bin/env bash
# expect-error.sh REGEX COMMAND...: passes when COMMAND exits with a plain error (1..125, not a crash
# or signal), prints REGEX on stderr, and leaves no file named by --output/--out behind.
set -u
regex=$1; shift
stderr=$(mktemp)
"$@" 2>"$stderr" >/dev/null
status=$?
message=$(cat "$stderr"); rm -f "$stderr"
if [ $status -eq 0 ] || [ $status -gt 125 ]; then
  echo "FAIL: exit status $status (expected a clean error) from: $*"; echo "$message"; exit 1
fi
if ! grep -qE -- "$regex" <<<"$message"; then
  echo "FAIL: stderr does not match '$regex':"; echo "$message"; exit 1
fi
prev=""
for arg in "$@"; do
  if [[ $prev == --output || $prev == --out || $prev == --out-image ]] && [ -e "$arg" ]; then
    echo "FAIL: output $arg was written despite the error"; exit 1
  fi
  prev=$arg
done
echo "ok: exit $status: $message"
