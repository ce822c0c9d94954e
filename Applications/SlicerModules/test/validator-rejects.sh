#!/usr/bin/env bash
# validator-rejects.sh SEM_TOOLS: every file in SEM_TOOLS/negative must fail validation, so a passing
# module test means something. Skips (77) when the checker is absent.
set -u
tools=$1
[ -x "$tools/validate_cli.sh" ] || { echo "SKIP: no Slicer XML checker at $tools"; exit 77; }
status=0 count=0
for bad in "$tools"/negative/*.xml; do
  count=$((count + 1))
  if "$tools/validate_cli.sh" "$bad" >/dev/null 2>&1; then
    echo "FAIL: $bad was accepted"; status=1
  fi
done
[ $count -gt 0 ] || { echo "FAIL: no negative examples in $tools/negative"; exit 1; }
echo "$count invalid descriptions rejected"
exit $status
