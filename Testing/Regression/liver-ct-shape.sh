#!/usr/bin/env bash
# Liver (label 5) shape segmentation on the TotalSegmentator example CT (issue 10's qualitative check):
# ONE subject only, so this is no accuracy experiment. The shape model and boundary classifiers are
# trained on COPIES augmented copies of example_ct.nii.gz (`canopy augment`: rotation, translation,
# isotropic scale and intensity; seeds 1..COPIES), which differ from each other only by a similarity
# transform: the model's shape modes are close to empty and the refinement relies on the mean shape, the
# free iterations and the boundary classifiers. The test image is another augmented copy (seed 999,
# at most ROTATION degrees and TRANSLATION mm), segmented from the pose of the UN-augmented label map
# (`--init-label`: the start is displaced by exactly what the augmentation did), keeping the model's
# orientation (`--ignore-pose-axes`: the liver's principal axes are no stable frame; with them the start
# is turned and the fit fails, Dice 0.55 on the training image itself). Writes the mesh
# (liver.vtk) and the label map (liver.nii.gz), and prints Dice and mean surface distance of the start
# (the un-augmented label against the test copy's) and of the result against the test copy's label.
# The labels are TotalSegmentator predictions, not manual; the liver is cut at the volume's top slice.
# Skipped (77) without the data.
#   liver-ct-shape.sh CANOPY OUTDIR [COPIES=6] [DEVICE=auto] [EXTRA segment-shape options...]
# Environment: ROTATION (5), TRANSLATION (6), SHAPE_OPTIONS (train-shape options, default below: search
#   12 / 8 / 4 mm and frame scales 4 / 2 / 1 for a ~150 mm organ on 3 mm voxels).
set -euo pipefail
canopy=$1; out=$2; copies=${3:-6}; device=${4:-auto}; shift $(( $# < 4 ? $# : 4 ))
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}/totalsegmentator-examples
if [ ! -f "$data/example_ct.nii.gz" ]; then
  echo "SKIP: $data not found (set CANOPY_DATA_DIR to the folder holding totalsegmentator-examples)"; exit 77
fi
rm -rf "$out"; mkdir -p "$out"
seconds() { python3 -c 'import time; print(round(time.time()))'; }
train=()
for ((c = 1; c <= copies; ++c)); do
  "$canopy" augment --image "$data/example_ct.nii.gz" --label "$data/example_seg_fast_force_split.nii.gz" \
    --positive-label 5 --seed "$c" --out-image "$out/train$c.nii.gz" --out-label "$out/train-label$c.nii.gz" > /dev/null
  train+=(--image "$out/train$c.nii.gz" --label "$out/train-label$c.nii.gz")
done
"$canopy" augment --image "$data/example_ct.nii.gz" --label "$data/example_seg_fast_force_split.nii.gz" \
  --positive-label 5 --seed 999 --max-rotation "${ROTATION:-5}" --max-translation "${TRANSLATION:-6}" \
  --out-image "$out/test.nii.gz" --out-label "$out/test-label.nii.gz" > /dev/null
t0=$(seconds)
# shellcheck disable=SC2086
"$canopy" train-shape "${train[@]}" --structure liver=1 --boundary --device "$device" --quiet \
  ${SHAPE_OPTIONS---keep-largest-piece --boundary-search 12,8,4 --boundary-scale 4,2,1} \
  --out "$out/shape.json" --report "$out/train-shape.json"
echo "shape model and boundary classifiers: $(($(seconds) - t0)) s"
"$canopy" segment-shape --shape "$out/shape.json" --input "$out/test.nii.gz" --init-label "$data/example_seg_fast_force_split.nii.gz" \
  --init-label-value 5 --ignore-pose-axes --output "$out/liver.nii.gz" --mesh "$out/liver.vtk" --report "$out/segment-shape.json" \
  --device "$device" --quiet "$@"
"$canopy" evaluate --test "$out/liver.nii.gz" --reference "$out/test-label.nii.gz" --json "$out/result.json" > /dev/null
"$canopy" evaluate --test-mesh "$out/liver.vtk" --reference "$out/test-label.nii.gz" --json "$out/result-mesh.json" > /dev/null
# The start's error: the test copy's liver against the un-augmented one (where the start's pose comes from).
"$canopy" evaluate --test "$out/test-label.nii.gz" --reference "$data/example_seg_fast_force_split.nii.gz" \
  --reference-label 5 --json "$out/start.json" > /dev/null
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
line = lambda what, m: (f"{what}: Dice {m['dice']:.3f}, mean surface distance {m['surface']['meanMm']:.2f} mm "
                        f"(95% {m['surface']['percentile95Mm']:.1f}, max {m['surface']['maximumMm']:.1f}), "
                        f"volume {m['volumeTestMm3'] / 1000:.0f} vs {m['volumeReferenceMm3'] / 1000:.0f} ml")
print(line("start (un-augmented liver vs the test copy's)", json.load(open(f"{out}/start.json"))["metrics"]))
print(line("refined liver vs the test copy's label", json.load(open(f"{out}/result.json"))["metrics"]))
d = json.load(open(f"{out}/result-mesh.json"))["meshDistance"]
print(f"refined mesh vs the test copy's label surface: mean {d['meanMm']:.2f} mm, 95% {d['percentile95Mm']:.2f} mm, "
      f"max {d['maximumMm']:.2f} mm")
print(f"refinement {json.load(open(f'{out}/segment-shape.json'))['seconds']:.1f} s")
PY
