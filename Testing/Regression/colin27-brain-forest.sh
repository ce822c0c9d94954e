#!/usr/bin/env bash
# Regression for the setting chosen toward issue 13's brain-extraction goal (Dice >= 0.97 and mean surface
# distance <= 1 mm; met on six held-out copies, on seed 777 the distance but not Dice, 0.9681): the
# colin27 cascade chosen on held-out copies (docs/ACCURACY.md, session 19, `ctop13deeper`), trained on
# the GPU on copies 1000-1009, predicted at its operating point 0.65 on the evaluation copy (seed 777) and
# on held-out copies 1010 and 1011, each against a floor below what was measured (GPU training gives the
# CPU's forest, so a run is repeatable: the floors leave room for other hosts' rounding, not for luck).
#   colin27-brain-forest.sh CANOPY OUTDIR
# Exits 77 (ctest: skipped) without colin27 (apt-get install mricron-data) or without a usable CUDA device:
# on a CPU the training takes hours. About 20 minutes on an NVIDIA H200 (the selection run's time); the model,
# 429 MB as JSON, is written here as CBOR (.cbor), which forest models of 50-99 MB read 2-3 times faster.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
canopy=$1; out=$2
if ! "$canopy" devices | grep -q '^cuda:.*' || "$canopy" devices | grep -q 'NOT USABLE'; then
  echo "SKIP: no usable CUDA device (the training takes hours on a CPU)"; exit 77
fi
mkdir -p "$out"
top=intensity,gaussian:1,gaussian:3,gradient:1,log:2,position,tophat:1,tophat:2,tophat:4
CANOPY=$canopy DEVICE=cuda VARIANTS=cascade POSTPROCESS=none THRESHOLDS=0.65 EVAL_SEEDS="777 1010 1011" \
  TAG=goal CHANNELS=$top MODEL_EXTENSION=cbor \
  FOREST="--trees 16 --depth 30 --features 200 --max-offset 24 --max-box 12 --samples-per-image 800000 --sampling balanced" \
  "$here/../../scripts/brain-forest-experiment" "$out" --boundary-share 0.5 --boundary-band 3 \
  --context-channels tophat:1,tophat:3
python3 - "$out" <<'PY'
import json, sys
def at(name):  # the metrics at the operating point 0.65
    point = [p for p in json.load(open(f"{sys.argv[1]}/{name}-sweep.json"))["sweep"] if abs(p["threshold"] - 0.65) < 1e-9]
    return point[0]["metrics"]
# floors: measured 2026-11-29 on an H200 (docs/ACCURACY.md): seed 777 0.9681 / 0.995 mm;
# 1010 0.9715 / 1.028 mm; 1011 0.9704 / 1.120 mm
checks = [("seed 777", at("goal-cascade-none"), 0.965, 1.02),
          ("copy 1010", at("goal-cascade-none-seed1010"), 0.968, 1.06),
          ("copy 1011", at("goal-cascade-none-seed1011"), 0.967, 1.15)]
ok = True
for name, m, dice, distance in checks:
    good = m["dice"] >= dice and m["surface"]["meanMm"] <= distance
    ok = ok and good
    print(f"{'ok  ' if good else 'FAIL'} {name}: Dice {m['dice']:.4f} (floor {dice}), mean surface distance "
          f"{m['surface']['meanMm']:.3f} mm (ceiling {distance})")
sys.exit(0 if ok else 1)
PY
