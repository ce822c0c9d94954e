#!/usr/bin/env bash
# Regression for `canopy segment` on MSD Task04 hippocampus, class 1 (anterior), a small structure
# (~1,500 voxels of 1 mm^3): train-pbt on the first TRAIN subjects of dataset.json chooses and stores a
# graph-cut lambda; segment (no --lambda: the model's) must give a non-empty label on each of the next
# TEST subjects, with mean Dice >= FLOOR. Prints the Dice with the old fixed lambda = 1 mm beside it.
#   hippocampus-segment.sh CANOPY OUTDIR TRAIN TEST FLOOR
# Data: $CANOPY_DATA_DIR/Task04_Hippocampus (default: ../shared/data beside the checkout). Exits 77
# (ctest: skipped) with a message when the data is absent.
set -euo pipefail
canopy=$1; out=$2; train=$3; test=$4; floor=$5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}
dataset=$data/Task04_Hippocampus/dataset.json
if [ ! -f "$dataset" ]; then
  echo "SKIP: $dataset not found (set CANOPY_DATA_DIR to the folder holding Task04_Hippocampus)"; exit 77
fi
device=${CANOPY_DEVICE:-cpu}
mkdir -p "$out"
"$canopy" train-pbt --dataset "$dataset" --max-volumes "$train" --positive-label 1 --spacing 1 --box-mm 36 \
  --prior-weights --device "$device" --out "$out/class1-pbt.json" --report "$out/train.json" --quiet
# Held-out subjects: the TEST entries after the first TRAIN of dataset.json.
mapfile -t pairs < <(python3 - "$dataset" "$train" "$test" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1])); root = os.path.dirname(sys.argv[1]); a = int(sys.argv[2]); n = int(sys.argv[3])
for e in d["training"][a:a + n]:
    print(os.path.normpath(os.path.join(root, e["image"])), os.path.normpath(os.path.join(root, e["label"])))
PY
)
for pair in "${pairs[@]}"; do
  read -r image label <<<"$pair"
  name=$(basename "$image" .nii.gz)
  "$canopy" segment --model "$out/class1-pbt.json" --input "$image" --output "$out/$name-model.nii.gz" \
    --report "$out/$name-model.json" --device "$device" --quiet >/dev/null
  "$canopy" evaluate --test "$out/$name-model.nii.gz" --reference "$label" --reference-label 1 \
    --json "$out/$name-model-dice.json" >/dev/null
  "$canopy" segment --model "$out/class1-pbt.json" --input "$image" --output "$out/$name-lambda1.nii.gz" \
    --lambda 1 --report "$out/$name-lambda1.json" --device "$device" --quiet >/dev/null 2>"$out/$name-lambda1.stderr"
  "$canopy" evaluate --test "$out/$name-lambda1.nii.gz" --reference "$label" --reference-label 1 \
    --json "$out/$name-lambda1-dice.json" >/dev/null
done
python3 - "$out" "$floor" "${pairs[@]}" <<'PY'
import json, os, sys
out, floor = sys.argv[1], float(sys.argv[2]); ok = True; model, old = [], []
for pair in sys.argv[3:]:
    name = os.path.basename(pair.split()[0])[:-len(".nii.gz")]
    seg = json.load(open(f"{out}/{name}-model.json"))
    d = json.load(open(f"{out}/{name}-model-dice.json"))["metrics"]["dice"]
    d1 = json.load(open(f"{out}/{name}-lambda1-dice.json"))["metrics"]["dice"]
    labelled = seg["graphCut"]["voxelsLabelled"]; p = seg["parameters"]
    print(f"{name}: lambda {p['lambda']} mm ({p['lambdaSource']}): {labelled} voxels, Dice {d:.4f};"
          f" lambda 1 mm: Dice {d1:.4f}")
    ok &= labelled > 0 and p["lambdaSource"] == "model"
    model.append(d); old.append(d1)
mean = sum(model) / len(model)
print(f"{'ok  ' if mean >= floor and ok else 'FAIL'} mean Dice {mean:.4f} (floor {floor}; lambda 1 mm: {sum(old) / len(old):.4f})")
sys.exit(0 if ok and mean >= floor else 1)
PY
