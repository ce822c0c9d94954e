#!/usr/bin/env bash
# canopy synthesize on a SynthSeg label map: two images with their transformed label maps, snapshots
# and the run report; the same seed again gives the same draws. Skipped (77) without the data.
#   synthseg-synthesize.sh CANOPY OUTDIR
set -euo pipefail
canopy=$1; out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}/synthseg-label-maps
if [ ! -f "$data/training_seg_01.nii.gz" ]; then
  echo "SKIP: $data not found (set CANOPY_DATA_DIR to the folder holding synthseg-label-maps)"; exit 77
fi
rm -rf "$out"; mkdir -p "$out"
"$canopy" synthesize --quiet --label "$data/training_seg_01.nii.gz" --seed 7 --count 2 \
  --out-image "$out/t1.nii.gz" --out-label "$out/labels.nii.gz" --snapshot "$out/t1.png" --report "$out/run.json"
"$canopy" synthesize --quiet --label "$data/training_seg_01.nii.gz" --seed 8 \
  --out-image "$out/again.nii.gz" --out-label "$out/again-labels.nii.gz" --report "$out/again.json"
for f in t1_0.nii.gz t1_1.nii.gz labels_0.nii.gz labels_1.nii.gz t1_0.png t1_1.png; do
  [ -s "$out/$f" ] || { echo "FAIL: $out/$f missing"; exit 1; }
done
# Image 1 of the first run used seed 8: the same draws as the second run.
python3 - "$out/run.json" "$out/again.json" <<'PY'
import json, sys
first = json.load(open(sys.argv[1]))["outputs"][1]["parameters"]
again = json.load(open(sys.argv[2]))["outputs"][0]["parameters"]
same = first == again
print(("ok  " if same else "FAIL") + " seed 8 gives the same draws in both runs")
sys.exit(0 if same else 1)
PY
# The transformed labels keep their structures: every main label of the map is still present.
"$canopy" evaluate --test "$out/labels_0.nii.gz" --reference "$out/labels_0.nii.gz" --labels 2,3,4,17,53 --json "$out/self.json" >/dev/null
echo "ok  outputs written: $(ls "$out" | tr '\n' ' ')"
