#!/usr/bin/env bash
# Regression: the main job's pipeline on colin27 (mricron-data). Trains the demo's PBT on augmented
# copies, classifies and segments (graph cut) a held-out transformed copy and compares Dice, volume
# and surface distances with the stored baseline.
#   colin27-brain.sh CANOPY OUTDIR BASELINE_JSON
# Exits 77 (ctest: skipped) when mricron-data is not installed. To refresh the baseline after a
# deliberate change, update BASELINE_JSON from OUTDIR/*-metrics.json and say why in the commit.
set -euo pipefail
canopy=$1; out=$2; baseline=$3
templates=${CANOPY_COLIN27_DIR:-/usr/share/mricron/templates}
if [ ! -f "$templates/ch2.nii.gz" ] || [ ! -f "$templates/ch2bet.nii.gz" ]; then
  echo "SKIP: colin27 not found in $templates (apt-get install mricron-data)"; exit 77
fi
mkdir -p "$out"
"$canopy" augment --image "$templates/ch2.nii.gz" --label "$templates/ch2bet.nii.gz" --seed 777 \
  --out-image "$out/heldout-t1.nii.gz" --out-label "$out/heldout-brain.nii.gz" >/dev/null
"$canopy" train-pbt --quiet --image "$templates/ch2.nii.gz" --label "$templates/ch2bet.nii.gz" \
  --augment 12 --augment-seed 1000 --spacing 2 --box-mm 60 --features 1500 --depth 6 --learners 30 \
  --candidates 150 --positives 4000 --negatives 5000 --device cpu --lambda-volumes 2 --out "$out/brain-pbt.json"
"$canopy" classify --quiet --model "$out/brain-pbt.json" --input "$out/heldout-t1.nii.gz" \
  --output "$out/probability.nii.gz" --device cpu
"$canopy" evaluate --test "$out/probability.nii.gz" --reference "$out/heldout-brain.nii.gz" --json "$out/probability-metrics.json"
"$canopy" segment --quiet --model "$out/brain-pbt.json" --input "$out/heldout-t1.nii.gz" --device cpu \
  --output "$out/segmentation.nii.gz" --lambda 1
"$canopy" evaluate --test "$out/segmentation.nii.gz" --reference "$out/heldout-brain.nii.gz" --json "$out/segmentation-metrics.json"
python3 - "$out" "$baseline" <<'PY'
import json, sys
got = {name: json.load(open(f"{sys.argv[1]}/{name}-metrics.json"))["metrics"] for name in ("probability", "segmentation")}
want = json.load(open(sys.argv[2]))
ok = True
for key, spec in want["checks"].items():
    value = got
    for part in key.split("."):  # e.g. segmentation.surface.meanMm
        value = value[part]
    if not (spec["min"] <= value <= spec["max"]):
        print(f"FAIL {key} = {value} outside [{spec['min']}, {spec['max']}] (baseline {spec['baseline']})"); ok = False
    else:
        print(f"ok   {key} = {value} (baseline {spec['baseline']}, allowed [{spec['min']}, {spec['max']}])")
sys.exit(0 if ok else 1)
PY
