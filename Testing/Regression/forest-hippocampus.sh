#!/usr/bin/env bash
# Regression on MSD Task04 hippocampus with a decision forest (classes 0/1/2): canopy train-forest on a
# seeded split (--test-fraction 0.2, split seed 1, as msd-experiment), Dice of classes 1 and 2 on the
# held-out subjects must stay above a floor; then predict-forest in all four modes on one subject.
#   forest-hippocampus.sh CANOPY OUTDIR MAX_VOLUMES FLOOR [extra train-forest options]
# Data: $CANOPY_DATA_DIR/Task04_Hippocampus (default: ../shared/data beside the checkout). Exits 77
# (ctest: skipped) with a message when the data is absent.
set -euo pipefail
canopy=$1; out=$2; volumes=$3; floor=$4; shift 4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}
dataset=$data/Task04_Hippocampus/dataset.json
if [ ! -f "$dataset" ]; then
  echo "SKIP: $dataset not found (set CANOPY_DATA_DIR to the folder holding Task04_Hippocampus)"; exit 77
fi
mkdir -p "$out"
# The filter bank unless the options give one (CLI11 takes an option once).
channels=(--channels intensity,gaussian:1,gradient:1,log:2)
case " $* " in *" --channels "*) channels=() ;; esac
"$canopy" train-forest --dataset "$dataset" --max-volumes "$volumes" --test-fraction 0.2 --split-seed 1 \
  "${channels[@]}" --device "${CANOPY_DEVICE:-cpu}" \
  --out "$out/forest.json" --report "$out/report.json" --quiet "$@"
python3 - "$out/report.json" "$floor" <<'PY'
import json, sys
report = json.load(open(sys.argv[1])); floor = float(sys.argv[2]); ok = True
for cls in ("1", "2"):
    s = report["dice"][cls]
    verdict = "ok  " if s["mean"] >= floor else "FAIL"
    ok &= s["mean"] >= floor
    print(f"{verdict} class {cls}: mean Dice {s['mean']:.4f} (floor {floor}), median {s['median']:.4f}, worst {s['worst']:.4f}, n {s['n']}")
print(f"pixel accuracy {report['pixelAccuracy']:.4f}, mean class accuracy {report['meanClassAccuracy']:.4f}, training {report['trainSeconds']:.1f} s")
sys.exit(0 if ok else 1)
PY
# predict-forest on one subject: every mode writes an image; a 2D input is refused for this 3D model.
subject=$(python3 -c "import json,os,sys; d=json.load(open(sys.argv[1])); print(os.path.join(os.path.dirname(sys.argv[1]), d['training'][0]['image']))" "$dataset")
modes="argmax distribution leaves treeleaf"
if grep -q '"canopy-forest-cascade"' "$out/forest.json"; then
  modes="argmax distribution" # a cascade's output is the last stage's classes; leaves are refused
  if "$canopy" predict-forest --model "$out/forest.json" --input "$subject" --output "$out/never.nrrd" \
      --mode leaves --quiet 2>"$out/error.txt" || ! grep -q "auto-context cascade" "$out/error.txt"; then
    echo "FAIL: --mode leaves was not refused for a cascade"; exit 1
  fi
fi
for mode in $modes; do
  "$canopy" predict-forest --model "$out/forest.json" --input "$subject" --output "$out/predict-$mode.nrrd" \
    --mode "$mode" --device "${CANOPY_DEVICE:-cpu}" --quiet
  test -s "$out/predict-$mode.nrrd"
done
if "$canopy" predict-forest --model "$out/forest.json" --input "$here/../../Data/Testing/slice2d.nrrd" \
    --output "$out/never.nrrd" --quiet 2>"$out/error.txt"; then
  echo "FAIL: a 2D input was accepted by a 3D model"; exit 1
fi
grep -q "a 2D image, but the model" "$out/error.txt"
echo "ok   predict-forest: four modes written, 2D input refused"
