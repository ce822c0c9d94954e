#!/usr/bin/env bash
# Installs a Canopy build into a fresh prefix, then configures, builds and runs the project in this
# folder against the installed package (find_package(Canopy), no access to the build tree).
# Usage: test-installed-package.sh BUILD_DIR WORK_DIR [cmake configure options for the project...]
set -euo pipefail
build=$1 work=$2
shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/canopy include/canopy-0.1/canopyConfigure.h include/canopy-0.1/canopy/Device.h \
  include/canopy-0.1/itkPBTClassificationImageFilter.hxx lib/cmake/Canopy-0.1/CanopyConfig.cmake \
  lib/cmake/Canopy-0.1/CanopyConfigVersion.cmake lib/cmake/Canopy-0.1/CanopyTargets.cmake \
  share/doc/Canopy/MODEL_FORMAT.md; do
  [ -e "$prefix/$f" ] || { echo "not installed: $f" >&2; exit 1; }
done
"$prefix/bin/canopy" --version

cmake -S "$here" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON "$@"
canopy_dir=$(sed -n 's/^Canopy_DIR:PATH=//p' "$work/build/CMakeCache.txt")
[ "$canopy_dir" = "$prefix/lib/cmake/Canopy-0.1" ] || { echo "found Canopy at '$canopy_dir', not in $prefix" >&2; exit 1; }
cmake --build "$work/build"
"$work/build/canopyExternalProject" "$work"
