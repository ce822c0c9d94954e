#!/usr/bin/env bash
# Liver (label 5) on the TotalSegmentator examples: train a PBT on the abdominal CT (3 mm NIfTI,
# augmented copies, Hounsfield window normalisation), segment the 20-slice DICOM CT series (read with
# ITK's GDCM IO, 0.98 x 0.98 x 2 mm) and compare with its label map (resampled: the series' rows run
# the other way). The floor only guards against regressions; see docs/ACCURACY.md for what it means.
#   liver-ct.sh CANOPY OUTDIR FLOOR
set -euo pipefail
canopy=$1; out=$2; floor=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}/totalsegmentator-examples
if [ ! -d "$data/example_ct_dicom" ]; then
  echo "SKIP: $data not found (set CANOPY_DATA_DIR to the folder holding totalsegmentator-examples)"; exit 77
fi
mkdir -p "$out"
"$canopy" train-pbt --quiet --image "$data/example_ct.nii.gz" --label "$data/example_seg_fast_force_split.nii.gz" \
  --positive-label 5 --augment 8 --spacing 3 --box-mm 60 --features 1500 --depth 6 --learners 30 --candidates 150 \
  --positives 4000 --negatives 6000 --prior-weights --normalize window --window -200 300 --device cpu \
  --out "$out/liver-pbt.json"
"$canopy" segment --quiet --model "$out/liver-pbt.json" --input "$data/example_ct_dicom" --device cpu \
  --output "$out/dicom-liver.nii.gz" --lambda 2 --snapshot "$out/dicom-liver.png"
"$canopy" evaluate --test "$out/dicom-liver.nii.gz" --reference "$data/example_seg_dicom.nii.gz" --reference-label 5 \
  --resample-test --json "$out/metrics.json"
python3 - "$out/metrics.json" "$floor" <<'PY'
import json, sys
dice = json.load(open(sys.argv[1]))["metrics"]["dice"]; floor = float(sys.argv[2])
print(("ok  " if dice >= floor else "FAIL") + f" liver Dice on the DICOM series {dice:.4f} (floor {floor})")
sys.exit(0 if dice >= floor else 1)
PY
