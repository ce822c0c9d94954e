#!/usr/bin/env bash
# configure-with-stand-in.sh BUILD_DIR: configures the Slicer/ extension project against a stand-in
# Slicer_DIR (stand-in/: the variables Slicer's config and SlicerExecutionModel set) and checks that
# each CLI module is placed in Slicer's cli-modules folder and installed there. Catches CMake errors
# in the extension project without a Slicer build tree; the real build against Slicer is manual
# (README.md, "3D Slicer").
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$1
rm -rf "$build"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$here/.." -B "$build" "${generator[@]}" -DSlicer_DIR="$here/stand-in" -DCANOPY_USE_CUDA=OFF >"$build.log" 2>&1 ||
  { cat "$build.log"; exit 1; }
status=0
modules=(CanopySegment CanopyClassify CanopyForestPredict CanopyDetect CanopySegmentShape CanopyScribbleSegment)
for module in "${modules[@]}"; do
  grep -q "lib/Slicer-stand-in/cli-modules/$module" "$build"/build.ninja "$build"/Makefile 2>/dev/null ||
    { echo "FAIL: $module is not built into Slicer's cli-modules folder"; status=1; }
  grep -rqs "lib/Slicer-stand-in/cli-modules/$module" "$build/Canopy/Applications/SlicerModules/cmake_install.cmake" ||
    { echo "FAIL: $module is not installed into Slicer's cli-modules folder"; status=1; }
done
[ $status = 0 ] && echo "the extension project configures; ${#modules[@]} CLI modules go to Slicer's cli-modules folder"
rm -rf "$build" "$build.log"
exit $status
