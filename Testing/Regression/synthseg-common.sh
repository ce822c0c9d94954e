# Shared by the SynthSeg regression scripts (sourced, not run): synthesizing their training and test
# volumes the same way, so the detector and network experiments train and test on the same images.
# Needs: canopy, data (the synthseg-label-maps folder), out.

# synthseg_training_set COPIES SUBJECT...: synthesizes COPIES images per subject (seed 1<subject>) and
# sets the array `train` to their --image/--label pairs.
synthseg_training_set() {
  local copies=$1 s c image label
  shift
  train=()
  for s in "$@"; do
    "$canopy" synthesize --quiet --label "$data/training_seg_$s.nii.gz" --seed "1$s" --count "$copies" \
      --out-image "$out/t$s.nii.gz" --out-label "$out/l$s.nii.gz" >/dev/null
    for ((c = 0; c < copies; ++c)); do
      image=$out/t$s.nii.gz label=$out/l$s.nii.gz
      [ "$copies" -gt 1 ] && image=$out/t${s}_$c.nii.gz label=$out/l${s}_$c.nii.gz
      train+=(--image "$image" --label "$label")
    done
  done
}

# synthseg_test_volume SUBJECT: one image of the subject with another seed (9<subject>), written to
# $out/test<subject>.nii.gz with its label map $out/test-labels<subject>.nii.gz.
synthseg_test_volume() {
  "$canopy" synthesize --quiet --label "$data/training_seg_$1.nii.gz" --seed "9$1" \
    --out-image "$out/test$1.nii.gz" --out-label "$out/test-labels$1.nii.gz" >/dev/null
}
