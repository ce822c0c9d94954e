#!/usr/bin/env bash
# canopy mesh and canopy evaluate end to end on ITK-SNAP's MRIcrop segmentation (shared data):
#   test-mesh-evaluate.sh CANOPY OUTDIR
# The .vtk is legacy 4.2 with SPACE=LPS; a map against itself gives Dice 1 and 0 mm for every label;
# label 1 against ITK-SNAP's ventricle mesh (RAS, untagged) read with --mesh-space ras lies within
# 1 mm on average, and read as LPS it does not. Exits 77 (ctest: skipped) when the data are absent.
set -euo pipefail
canopy=$1; out=$2
data=${CANOPY_DATA_DIR:-$(dirname "$0")/../../../shared/data}/itksnap-mricrop
if [ ! -f "$data/MRIcrop-seg.nii.gz" ] || [ ! -f "$data/MRIcrop-ventricle-mesh.vtk" ]; then
  echo "SKIP: no MRIcrop-seg.nii.gz / MRIcrop-ventricle-mesh.vtk in $data (set CANOPY_DATA_DIR)"; exit 77
fi
mkdir -p "$out"
"$canopy" mesh --input "$data/MRIcrop-seg.nii.gz" --label 1 --smooth 10 --output "$out/ventricle.vtk"
head -n 2 "$out/ventricle.vtk" | tr -d '\r' > "$out/ventricle-header.txt"
grep -qx "# vtk DataFile Version 4.2" "$out/ventricle-header.txt"
grep -q "SPACE=LPS" "$out/ventricle-header.txt"
"$canopy" mesh --input "$data/MRIcrop-seg.nii.gz" --decimate 0.5 --output "$out/all.stl"
"$canopy" evaluate --test "$data/MRIcrop-seg.nii.gz" --reference "$data/MRIcrop-seg.nii.gz" --labels all \
  --json "$out/self.json"
"$canopy" evaluate --test "$data/MRIcrop-seg.nii.gz" --labels 1 --reference-mesh "$data/MRIcrop-ventricle-mesh.vtk" \
  --mesh-space ras --json "$out/ras.json"
"$canopy" evaluate --test "$data/MRIcrop-seg.nii.gz" --labels 1 --reference-mesh "$data/MRIcrop-ventricle-mesh.vtk" \
  --json "$out/lps.json"
# Our tagged LPS mesh against the binary mask of label 1: the tag wins over --mesh-space ras.
"$canopy" evaluate --test-mesh "$out/ventricle.vtk" --reference "$data/MRIcrop-seg.nii.gz" --reference-label 1 \
  --mesh-space ras --json "$out/own.json"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
labels = json.load(open(f"{out}/self.json"))["labels"]
assert len(labels) >= 2, labels
for entry in labels:
    assert entry["overlap"]["dice"] == 1.0 and entry["surface"]["maximumMm"] == 0.0, entry
ras = json.load(open(f"{out}/ras.json"))["meshDistance"]["meanMm"]
lps = json.load(open(f"{out}/lps.json"))["meshDistance"]["meanMm"]
own = json.load(open(f"{out}/own.json"))["meshDistance"]["meanMm"]
print(f"{len(labels)} labels identical; ventricle mesh distance {ras:.3f} mm (as RAS), {lps:.1f} mm (as LPS); "
      f"smoothed own mesh to the label's surface {own:.3f} mm")
assert ras < 1.0 and lps > 10.0 and own < 0.5
PY
