#!/usr/bin/env bash
# Shape segmentation of the MSD Task04 hippocampus (issue 10): canopy train-shape --boundary on the first
# TRAIN subjects of the training part of msd-experiment's split (seed 1, 160/40), then canopy
# segment-shape of each class (anterior = 1, posterior = 2) on the first TEST held-out subjects, started
# from the pose of the subject's GROUND-TRUTH label map (--init-label): NOT fully automatic (the pose
# detector of issue 9 replaces this start). Dice and mean surface distance per class with canopy
# evaluate. Skipped (77) without the data.
#   hippocampus-shape.sh CANOPY OUTDIR [TRAIN=40] [TEST=40] [DEVICE=auto] [EXTRA segment-shape options...]
# INIT=center starts where the training structures lay relative to the crop's centre instead
# (--init-image-center: automatic, no label used). SHAPE_MODEL=FILE reuses a model trained by an earlier run (same TRAIN) instead of training again.
# FLOORS="DICE_ANTERIOR DICE_POSTERIOR MSD_ANTERIOR MSD_POSTERIOR": fail (exit 1) when a class's mean Dice is
# below its floor or its mean surface distance (mm) above its ceiling.
set -euo pipefail
canopy=$1; out=$2; train=${3:-40}; test=${4:-40}; device=${5:-auto}; shift $(( $# < 5 ? $# : 5 ))
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}
dataset=$data/Task04_Hippocampus/dataset.json
[ -f "$dataset" ] || { echo "SKIP: $dataset not found (set CANOPY_DATA_DIR)"; exit 77; }
rm -rf "$out"; mkdir -p "$out"
python3 "$here/msd-split.py" "$dataset" "$train" "$test" > "$out/split.txt" # msd-experiment --split-seed 1
args=()
while read -r tag image label; do
  [ "$tag" = train ] && args+=(--image "$image" --label "$label")
done < "$out/split.txt"
if [ -n "${SHAPE_MODEL:-}" ]; then
  cp "$SHAPE_MODEL" "$out/shape.json"; echo "model: $SHAPE_MODEL" > "$out/train.log"
else
"$canopy" train-shape "${args[@]}" --structure anterior=1 --structure posterior=2 --keep-largest-piece --boundary \
  --levels 150,300,600 --boundary-search 4,3,2 --boundary-scale 1.5,1,1 --boundary-vertices 200 \
  --boundary-features 800 --boundary-depth 5 --device "$device" --quiet --out "$out/shape.json" \
  --report "$out/train-report.json" > "$out/train.log"
fi
cat "$out/train.log"
while read -r tag image label; do
  [ "$tag" = test ] || continue
  name=$(basename "$image" .nii.gz)
  for s in anterior:1 posterior:2; do
    structure=${s%:*}; value=${s#*:}
    "$canopy" segment-shape --shape "$out/shape.json" --structure "$structure" --input "$image" \
      $([ "${INIT:-label}" = center ] && echo --init-image-center || echo --init-label "$label") --output "$out/$name-$structure.nii.gz" --mesh "$out/$name-$structure.vtk" \
      --report "$out/$name-$structure-report.json" --device "$device" "$@" > /dev/null
    "$canopy" evaluate --test "$out/$name-$structure.nii.gz" --reference "$label" --labels "$value" \
      --json "$out/$name-$structure-evaluate.json" > /dev/null
  done
done < "$out/split.txt"
python3 - "$out" ${FLOORS:-0 0 1000 1000} "${INIT:-label}" <<'PY'
import glob, json, statistics, sys
out = sys.argv[1]
start = "training offset from the crop centre, automatic" if sys.argv[6] == "center" else "ground-truth label pose, not automatic"
floors = dict(anterior=(float(sys.argv[2]), float(sys.argv[4])), posterior=(float(sys.argv[3]), float(sys.argv[5])))
ok = True
for structure in ("anterior", "posterior"):
    dice, msd, secs = [], [], []
    for f in sorted(glob.glob(f"{out}/*-{structure}-evaluate.json")):
        l = json.load(open(f))["labels"][0]
        dice.append(l["overlap"]["dice"]); msd.append(l["surface"]["meanMm"])
        secs.append(json.load(open(f.replace("-evaluate.json", "-report.json")))["refinementSeconds"])
    print(f"{structure}: {len(dice)} held-out subjects, Dice mean {statistics.mean(dice):.3f} median "
          f"{statistics.median(dice):.3f} min {min(dice):.3f}; mean surface distance mean {statistics.mean(msd):.3f} mm; "
          f"refinement {statistics.mean(secs) * 1000:.1f} ms mean (start: {start})")
    good = statistics.mean(dice) >= floors[structure][0] and statistics.mean(msd) <= floors[structure][1]
    print(("ok  " if good else "FAIL") + f" {structure}: floor Dice {floors[structure][0]}, ceiling {floors[structure][1]} mm")
    ok = ok and good
sys.exit(0 if ok else 1)
PY
