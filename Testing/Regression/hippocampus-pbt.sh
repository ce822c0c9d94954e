#!/usr/bin/env bash
# Regression on MSD Task04 hippocampus: one-vs-rest PBTs (classes 1 anterior, 2 posterior) trained on a
# seeded split, Dice per class on the held-out subjects must stay above a floor.
#   hippocampus-pbt.sh CANOPY OUTDIR MAX_SUBJECTS FLOOR [extra msd-experiment options]
# Data: $CANOPY_DATA_DIR/Task04_Hippocampus (default: ../shared/data beside the checkout). Exits 77
# (ctest: skipped) with a message when the data is absent.
set -euo pipefail
canopy=$1; out=$2; subjects=$3; floor=$4; shift 4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}
dataset=$data/Task04_Hippocampus/dataset.json
if [ ! -f "$dataset" ]; then
  echo "SKIP: $dataset not found (set CANOPY_DATA_DIR to the folder holding Task04_Hippocampus)"; exit 77
fi
mkdir -p "$out"
"$canopy" msd-experiment --dataset "$dataset" --out "$out" --max-subjects "$subjects" --device "${CANOPY_DEVICE:-cpu}" \
  --report "$out/report.json" --quiet "$@"
python3 - "$out/report.json" "$floor" <<'PY'
import json, sys
report = json.load(open(sys.argv[1])); floor = float(sys.argv[2]); ok = True
for cls, s in report["dice"].items():
    verdict = "ok  " if s["mean"] >= floor else "FAIL"
    ok &= s["mean"] >= floor
    print(f"{verdict} class {cls}: mean Dice {s['mean']:.4f} (floor {floor}), median {s['median']:.4f}, worst {s['worst']:.4f}")
sys.exit(0 if ok else 1)
PY
