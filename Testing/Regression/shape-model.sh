#!/usr/bin/env bash
# canopy train-shape on real label maps (issue 10 part 1): compactness (variance held by k modes) and
# generalisation (leave-one-out reconstruction error, mm) of shape models of the left hippocampus and
# putamen of the 15 SynthSeg subjects, and of both MSD hippocampus classes on the first N subjects.
# Floors sit below the figures recorded in docs/ACCURACY.md. Skipped (77) without the data.
#   shape-model.sh CANOPY OUTDIR [MSD_SUBJECTS]
set -euo pipefail
canopy=$1; out=$2; msd=${3:-30}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}
synthseg=$data/synthseg-label-maps
hippocampus=$data/Task04_Hippocampus/dataset.json
if [ ! -f "$synthseg/training_seg_01.nii.gz" ] && [ ! -f "$hippocampus" ]; then
  echo "SKIP: neither $synthseg nor $hippocampus found (set CANOPY_DATA_DIR)"; exit 77
fi
rm -rf "$out"; mkdir -p "$out"
check() { # REPORT STRUCTURE MIN_SHARE_5_MODES MAX_LOO_5_MODES_MM MAX_FIT_MM
  python3 - "$@" <<'PY'
import json, sys
report, name, share5, loo5, fit = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
s = next(s for s in json.load(open(report))["structures"] if s["name"] == name)
c, g = s["compactness"], s["leaveOneOutMeanVertexErrorMm"]
print(f"{name}: {len(s['subjects'])} subjects, levels {[l['vertices'] for l in s['levels']]}, {s['modes']} modes "
      f"({100 * s['capturedVarianceShare']:.1f}%), template fit {s['meanFitToSurfaceMm']:.3f} mm")
print("  compactness k=1..10: " + " ".join(f"{x:.3f}" for x in c[:10]))
print("  leave-one-out mm k=1..10: " + " ".join(f"{x:.3f}" for x in g[:10]))
ok = c[4] >= share5 and g[4] <= loo5 and s["meanFitToSurfaceMm"] <= fit
print(("ok  " if ok else "FAIL") + f" 5 modes hold {c[4]:.3f} (floor {share5}), reconstruct held-out shapes to "
      f"{g[4]:.3f} mm (ceiling {loo5}); fit {s['meanFitToSurfaceMm']:.3f} mm (ceiling {fit})")
sys.exit(0 if ok else 1)
PY
}
status=0
if [ -f "$synthseg/training_seg_01.nii.gz" ]; then
  labels=()
  for i in $(seq -w 1 15); do labels+=(--label "$synthseg/training_seg_$i.nii.gz"); done
  "$canopy" train-shape "${labels[@]}" --structure hippocampus-left=17 --structure putamen-left=12 \
    --keep-largest-piece --leave-one-out 10 --quiet --out "$out/synthseg.json" --report "$out/synthseg-report.json"
  check "$out/synthseg-report.json" hippocampus-left 0.85 0.95 0.2 || status=1
  check "$out/synthseg-report.json" putamen-left 0.75 0.70 0.2 || status=1
else
  echo "SKIP: $synthseg not found"
fi
if [ -f "$hippocampus" ]; then
  "$canopy" train-shape --dataset "$hippocampus" --max-volumes "$msd" --structure anterior=1 --structure posterior=2 \
    --keep-largest-piece --leave-one-out 10 --quiet --out "$out/msd.json" --report "$out/msd-report.json"
  check "$out/msd-report.json" anterior 0.70 0.45 0.1 || status=1
  check "$out/msd-report.json" posterior 0.70 0.47 0.1 || status=1
else
  echo "SKIP: $hippocampus not found"
fi
exit $status
