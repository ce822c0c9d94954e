#!/usr/bin/env bash
# Regression in 2D: AAL labels (116 regions + background) on colin27 axial slices with a decision
# forest. Trains on slices A:B:S of ch2/aal (mricron-data) and tests on other slices (offset by half
# the step); pixel accuracy and mean class accuracy (over the labels present) must stay above floors.
#   forest-aal-2d.sh CANOPY OUTDIR TRAIN_SLICES TEST_SLICES PIXEL_FLOOR CLASS_FLOOR [extra options]
# CANOPY_AAL_CHANNELS replaces the filter bank (e.g. ...,position for position channels).
# Exits 77 (ctest: skipped) with a message when mricron-data is absent.
set -euo pipefail
canopy=$1; out=$2; train=$3; test=$4; pixelFloor=$5; classFloor=$6; shift 6
templates=${CANOPY_MRICRON_DIR:-/usr/share/mricron/templates}
if [ ! -f "$templates/ch2.nii.gz" ] || [ ! -f "$templates/aal.nii.gz" ]; then
  echo "SKIP: $templates/ch2.nii.gz or aal.nii.gz not found (install mricron-data)"; exit 77
fi
mkdir -p "$out"
"$canopy" train-forest --image "$templates/ch2.nii.gz" --label "$templates/aal.nii.gz" --slices "$train" \
  --test-slices "$test" --channels "${CANOPY_AAL_CHANNELS:-intensity,gaussian:2,gradient:1,log:3}" --device "${CANOPY_DEVICE:-cpu}" \
  --out "$out/forest.json" --report "$out/report.json" --quiet "$@"
python3 - "$out/report.json" "$pixelFloor" "$classFloor" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); pf = float(sys.argv[2]); cf = float(sys.argv[3])
fg = [s["mean"] for c, s in r["dice"].items() if c != "0" and s is not None]
print(f"{'ok  ' if r['pixelAccuracy'] >= pf else 'FAIL'} pixel accuracy {r['pixelAccuracy']:.4f} (floor {pf})")
print(f"{'ok  ' if r['meanClassAccuracy'] >= cf else 'FAIL'} mean class accuracy {r['meanClassAccuracy']:.4f} (floor {cf})")
print(f"     mean Dice over {len(fg)} labels present: {sum(fg) / max(len(fg), 1):.4f}; {r['images']['train']} train / {r['images']['test']} test slices; training {r['trainSeconds']:.1f} s")
sys.exit(0 if r["pixelAccuracy"] >= pf and r["meanClassAccuracy"] >= cf else 1)
PY
# predict-forest with the 2D model on a synthetic 2D image (NRRD written here): every mode writes an
# image; a 3D volume is refused.
python3 - "$out/input2d.nrrd" <<'PY'
import math, struct, sys
n = 96
with open(sys.argv[1], "wb") as f:
    f.write(b"NRRD0004\ntype: float\ndimension: 2\nsizes: %d %d\nspacings: 1 1\nencoding: raw\nendian: little\n\n" % (n, n))
    f.write(struct.pack("<%df" % (n * n), *[50 + 40 * math.sin(x / 7.0) * math.cos(y / 9.0) for y in range(n) for x in range(n)]))
PY
for mode in argmax distribution leaves treeleaf; do
  "$canopy" predict-forest --model "$out/forest.json" --input "$out/input2d.nrrd" \
    --output "$out/predict-$mode.nrrd" --mode "$mode" --device "${CANOPY_DEVICE:-cpu}" --quiet
  test -s "$out/predict-$mode.nrrd"
done
if "$canopy" predict-forest --model "$out/forest.json" --input "$templates/ch2.nii.gz" --output "$out/never.nrrd" \
    --quiet 2>"$out/error.txt"; then
  echo "FAIL: a 3D input was accepted by a 2D model"; exit 1
fi
grep -q "a 3D image, but the model" "$out/error.txt"
echo "ok   predict-forest: 2D image in four modes, 3D input refused"
