#!/usr/bin/env bash
# Fully automatic shape segmentation of the MSD Task04 hippocampus (issues 9 and 10): split seed 1 as
# `canopy msd-experiment` (160 train / 40 test), a pose detector for both classes (anterior = 1,
# posterior = 2) trained on the first TRAIN training subjects, detection on the first TEST held-out
# subjects and its pose errors (`evaluate-poses`: issue 9's "pose of each class"), then a shape model
# with boundary classifiers (`train-shape --boundary`) on the same training subjects and `segment-shape
# --detector` of each class on the held-out subjects, started from the detected pose (no label used),
# Dice and mean surface distance per class (`evaluate`). Skipped (77) without the data.
#   hippocampus-detect-shape.sh CANOPY OUTDIR [TRAIN=160] [TEST=40] [DEVICE=auto] [EXTRA segment-shape options...]
# Environment:
#   POSITION_SPACING (1) and PYRAMID (1,2): the detector's position grid and steerable pyramid (mm).
#     The crops are ~35 x 50 x 35 voxels of 1 mm and each class ~1.5 cm^3 (~25 x 15 x 10 mm): the
#     defaults of train-detector (3 mm grid, 2/4 mm pyramid, made for 256^3 heads) leave the position
#     stage ~12 x 17 x 12 voxels and a 4 mm level coarser than the structure's short axis.
#   DETECTOR_OPTIONS ("--threshold 0.01"): more train-detector options. The settings were chosen on a
#     validation split of the training part (VALIDATE=20: train on the first 20, test on the next 20;
#     docs/ACCURACY.md): a 1 mm grid placed centres best (median 1.55 / 1.56 mm vs 2.4 / 2.2 mm at 1.5
#     mm), and the default threshold 0.05 missed correctly placed structures (scores 0.015-0.04, 1.1-1.7
#     mm off) in 1-2 of 40, none below 0.01.
#   SHAPE_OPTIONS: train-shape options replacing the defaults below (levels, boundary search, scale,
#     vertices, features, depth), e.g. to compare boundary classifiers on a validation split.
#   DETECTOR=FILE / SHAPE_MODEL=FILE: reuse a detector / shape model trained by an earlier run (same TRAIN).
#   START_LABELS=DIR: each segment-shape also gets --start-labels DIR/NAME.nii.gz (a voxel classifier's labels
#     of the test subject: a second start; hippocampus-shape-fusion.sh FOREST_START=1 sets it) for the
#     structures named in START_STRUCTURES (default "anterior posterior").
#   VALIDATE=N: test on the N training-part subjects after the first TRAIN (a validation split for tuning;
#     the held-out 40 are not touched).
#   FLOORS="DICE_ANTERIOR DICE_POSTERIOR MSD_ANTERIOR MSD_POSTERIOR": fail (exit 1) when a class's mean
#     Dice is below its floor or its mean surface distance (mm) above its ceiling, or a structure of a
#     test subject is not found (a miss is never given a made-up pose).
set -euo pipefail
canopy=$1; out=$2; train=${3:-160}; test=${4:-40}; device=${5:-auto}; shift $(( $# < 5 ? $# : 5 ))
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}
dataset=$data/Task04_Hippocampus/dataset.json
[ -f "$dataset" ] || { echo "SKIP: $dataset not found (set CANOPY_DATA_DIR)"; exit 77; }
rm -rf "$out"; mkdir -p "$out"
if [ -n "${VALIDATE:-}" ]; then # the training part only: first TRAIN to train, the next VALIDATE to test
  python3 "$here/msd-split.py" "$dataset" $((train + VALIDATE)) 0 |
    awk -v n="$train" '{ if (NR > n) $1 = "test"; print }' > "$out/split.txt"
else
  python3 "$here/msd-split.py" "$dataset" "$train" "$test" > "$out/split.txt"
fi
args=()
while read -r tag image label; do
  [ "$tag" = train ] && args+=(--image "$image" --label "$label")
done < "$out/split.txt"
structures=(--structure anterior=1 --structure posterior=2)
seconds() { python3 -c 'import time; print(time.time())'; }

# 1. The pose detector (issue 9).
t0=$(seconds)
if [ -n "${DETECTOR:-}" ]; then
  cp "$DETECTOR" "$out/detector.json"; echo "detector: $DETECTOR" > "$out/train-detector.log"
else
  # shellcheck disable=SC2086
  "$canopy" train-detector "${args[@]}" "${structures[@]}" --position-spacing "${POSITION_SPACING:-1}" \
    --pyramid "${PYRAMID:-1,2}" ${DETECTOR_OPTIONS---threshold 0.01} --device "$device" --quiet --out "$out/detector.json" \
    --report "$out/train-detector-report.json" > "$out/train-detector.log"
fi
t1=$(seconds); cat "$out/train-detector.log"
[ -n "${DETECTOR:-}" ] || echo "detector training: $(python3 -c "print(round($t1 - $t0))") s (wall)"

# 2. Detection and pose errors on the test subjects.
while read -r tag image label; do
  [ "$tag" = test ] || continue
  name=$(basename "$image" .nii.gz)
  "$canopy" detect --model "$out/detector.json" --input "$image" --output "$out/$name-poses.json" \
    --report "$out/$name-detect-report.json" --device "$device" --quiet > /dev/null
  "$canopy" evaluate-poses --test "$out/$name-poses.json" --reference "$label" "${structures[@]}" \
    --json "$out/$name-pose-errors.json" > /dev/null
done < "$out/split.txt"

# 3. Shape model and boundary classifiers (skipped with POSES_ONLY=1: detector tuning) (issue 10; hippocampus-shape.sh's settings).
t0=$(seconds)
if [ -n "${POSES_ONLY:-}" ]; then
  echo "POSES_ONLY: no segmentation" > "$out/train-shape.log"
elif [ -n "${SHAPE_MODEL:-}" ]; then
  cp "$SHAPE_MODEL" "$out/shape.json"; echo "shape model: $SHAPE_MODEL" > "$out/train-shape.log"
else
  "$canopy" train-shape "${args[@]}" "${structures[@]}" --keep-largest-piece --boundary \
    ${SHAPE_OPTIONS:---levels 150,300,600 --boundary-search 4,3,2 --boundary-scale 1.5,1,1 --boundary-vertices 200 --boundary-features 800 --boundary-depth 5} --device "$device" --quiet --out "$out/shape.json" \
    --report "$out/train-shape-report.json" > "$out/train-shape.log"
fi
t1=$(seconds); cat "$out/train-shape.log"
[ -n "${SHAPE_MODEL:-}" ] || echo "shape training: $(python3 -c "print(round($t1 - $t0))") s (wall)"

# 4. Segmentation from the detector, evaluation. A structure the detector misses is recorded, not guessed.
while read -r tag image label; do
  [ "$tag" = test ] && [ -z "${POSES_ONLY:-}" ] || continue
  name=$(basename "$image" .nii.gz)
  for s in anterior:1 posterior:2; do
    structure=${s%:*}; value=${s#*:}
    start=()
    [ -z "${START_LABELS:-}" ] || [[ " ${START_STRUCTURES:-anterior posterior} " != *" $structure "* ]] ||
      start=(--start-labels "$START_LABELS/$name.nii.gz")
    if "$canopy" segment-shape --detector "$out/detector.json" --shape "$out/shape.json" --structure "$structure" \
      "${start[@]}" --input "$image" --output "$out/$name-$structure.nii.gz" --mesh "$out/$name-$structure.vtk" \
      --report "$out/$name-$structure-report.json" --device "$device" --quiet "$@" > /dev/null \
      2> "$out/$name-$structure-error.txt"; then
      rm -f "$out/$name-$structure-error.txt"
      "$canopy" evaluate --test "$out/$name-$structure.nii.gz" --reference "$label" --labels "$value" \
        --json "$out/$name-$structure-evaluate.json" > /dev/null
    else
      echo "$name $structure: segment-shape failed: $(cat "$out/$name-$structure-error.txt")"
    fi
  done
done < "$out/split.txt"

python3 - "$out" ${FLOORS:-0 0 1000 1000} "${POSES_ONLY:-}" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
floors = dict(anterior=(float(sys.argv[2]), float(sys.argv[4])), posterior=(float(sys.argv[3]), float(sys.argv[5])))
tests = [l.split()[1] for l in open(f"{out}/split.txt") if l.startswith("test")]
names = [os.path.basename(p)[:-len(".nii.gz")] for p in tests]
def row(label, values, fmt, worst):
    return (f"{label} mean {fmt.format(statistics.mean(values))} median {fmt.format(statistics.median(values))} "
            f"worst {fmt.format(worst(values))}")
ok = True
print(f"\n{len(names)} test subjects; start: the detector's pose (fully automatic, no label used)")
for structure in ("anterior", "posterior"):
    centre, angle, size, found, scores = [], [], [], 0, []
    for n in names:
        e = next(s for s in json.load(open(f"{out}/{n}-pose-errors.json"))["structures"] if s["name"] == structure)
        scores.append(next(s for s in json.load(open(f"{out}/{n}-poses.json"))["structures"]
                           if s["name"] == structure)["score"])
        if e["found"]:
            found += 1; centre.append(e["centerErrorMm"]); angle.append(e["orientationErrorDegrees"])
            size.append(e["worstSizeErrorPercent"])
    print(f"{structure} pose: found {found} of {len(names)}; " + (
        "; ".join([row("centre mm", centre, "{:.2f}", max), row("worst axis deg", angle, "{:.1f}", max),
                   row("worst size %", size, "{:.1f}", max)]) if centre else "nothing found") +
          f"; score median {statistics.median(scores):.3f} lowest {min(scores):.4f}")
    if sys.argv[6]:
        ok = ok and found == len(names); continue
    dice, msd, secs = [], [], []
    for n in names:
        f = f"{out}/{n}-{structure}-evaluate.json"
        if not os.path.exists(f):
            continue
        l = json.load(open(f))["labels"][0]
        dice.append(l["overlap"]["dice"]); msd.append(l["surface"]["meanMm"])
        r = json.load(open(f"{out}/{n}-{structure}-report.json"))
        secs.append(r["seconds"] + r["detection"]["seconds"])
    if not dice:
        print(f"FAIL {structure}: no subject segmented"); ok = False; continue
    print(f"{structure} segmentation: {len(dice)} of {len(names)} segmented; " +
          "; ".join([row("Dice", dice, "{:.3f}", min), row("mean surface distance mm", msd, "{:.3f}", max)]) +
          f"; detection + refinement {statistics.mean(secs):.2f} s mean")
    good = (len(dice) == len(names) and statistics.mean(dice) >= floors[structure][0]
            and statistics.mean(msd) <= floors[structure][1])
    print(("ok  " if good else "FAIL") + f" {structure}: all segmented, mean Dice >= {floors[structure][0]}, "
          f"mean surface distance <= {floors[structure][1]} mm")
    ok = ok and good
sys.exit(0 if ok else 1)
PY
