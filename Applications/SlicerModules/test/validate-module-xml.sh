#!/usr/bin/env bash
# validate-module-xml.sh SEM_TOOLS MODULE: the module's --xml and the MODULE.xml beside it validate with
# the Slicer Execution Model checker (SEM_TOOLS/validate_cli.sh: relaxed ModuleDescription schema with
# xmllint, then the semantic checks) and are the same text. Skips (77) when the checker is absent.
set -u
tools=$1 module=$2
if [ ! -x "$tools/validate_cli.sh" ]; then
  echo "SKIP: no Slicer XML checker at $tools (the shared/ tools beside the checkout; set CANOPY_SEM_TOOLS)"
  exit 77
fi
command -v xmllint >/dev/null || { echo "FAIL: xmllint is missing (Debian libxml2-utils; scripts/install-deps)"; exit 1; }
status=0
"$tools/validate_cli.sh" --exe "$module" || status=1
if [ -f "$module.xml" ]; then
  "$tools/validate_cli.sh" "$module.xml" || status=1
  cmp -s <("$module" --xml) "$module.xml" || { echo "FAIL: $module.xml differs from '$module --xml'"; status=1; }
else
  echo "FAIL: $module.xml is missing (the build writes it beside the module)"; status=1
fi
exit $status
