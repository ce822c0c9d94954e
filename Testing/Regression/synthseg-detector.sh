#!/usr/bin/env bash
# Pose detection on SynthSeg label maps (issue 9): train-detector on images synthesized from subjects
# 01-06 (COPIES random copies each), detect on subjects 11 and 12 (other seeds), evaluate-poses against
# their transformed label maps. Floors: every structure found, median centre error <= MAX_CENTRE mm and
# median worst-axis size error <= MAX_SIZE %. Skipped (77) without the data.
#   synthseg-detector.sh CANOPY OUTDIR [COPIES [MAX_CENTRE [MAX_SIZE]]]
# Environment: TRAIN_SUBJECTS (default "01 02 03 04 05 06"), TEST_SUBJECTS (default "11 12"): the issue's
# full experiment trains on 01-10 and tests on 11-15.
set -euo pipefail
canopy=$1; out=$2; copies=${3:-2}; max_centre=${4:-6}; max_size=${5:-20}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}/synthseg-label-maps
if [ ! -f "$data/training_seg_01.nii.gz" ]; then
  echo "SKIP: $data not found (set CANOPY_DATA_DIR to the folder holding synthseg-label-maps)"; exit 77
fi
structures=(--structure brainstem=16 --structure left_thalamus=10 --structure left_hippocampus=17 --structure right_putamen=51)
rm -rf "$out"; mkdir -p "$out"
read -r -a trainSubjects <<<"${TRAIN_SUBJECTS:-01 02 03 04 05 06}"
read -r -a testSubjects <<<"${TEST_SUBJECTS:-11 12}"
# shellcheck source=synthseg-common.sh
. "$here/synthseg-common.sh"
synthseg_training_set "$copies" "${trainSubjects[@]}"
"$canopy" train-detector --quiet "${train[@]}" "${structures[@]}" --out "$out/detector.json" --report "$out/train.json"
for s in "${testSubjects[@]}"; do
  synthseg_test_volume "$s"
  "$canopy" detect --model "$out/detector.json" --input "$out/test$s.nii.gz" --output "$out/poses$s.json" \
    --markups "$out/poses$s.mrk.json" --report "$out/detect$s.json"
  "$canopy" evaluate-poses --test "$out/poses$s.json" --reference "$out/test-labels$s.nii.gz" "${structures[@]}" \
    --json "$out/errors$s.json"
done
errors=()
for s in "${testSubjects[@]}"; do errors+=("$out/errors$s.json"); done
python3 - "$max_centre" "$max_size" "${errors[@]}" <<'PY'
import json, statistics, sys
max_centre, max_size = float(sys.argv[1]), float(sys.argv[2])
rows = [r for f in sys.argv[3:] for r in json.load(open(f))["structures"]]
missed = [r["name"] for r in rows if not r["found"]]
found = [r for r in rows if r["found"]]
centre = statistics.median(r["centerErrorMm"] for r in found) if found else float("inf")
size = statistics.median(r["worstSizeErrorPercent"] for r in found) if found else float("inf")
orientation = statistics.median(r["orientationErrorDegrees"] for r in found) if found else float("inf")
print(f"{len(found)} of {len(rows)} found; median centre {centre:.2f} mm (floor {max_centre}), "
      f"orientation {orientation:.1f} deg, worst-axis size {size:.1f} % (floor {max_size})")
ok = not missed and centre <= max_centre and size <= max_size
print(("ok  " if ok else "FAIL") + (f" not found: {missed}" if missed else ""))
sys.exit(0 if ok else 1)
PY
