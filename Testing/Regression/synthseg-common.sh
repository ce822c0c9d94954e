# Shared by the SynthSeg regression scripts (sourced, not run): synthesizing their training and test
# volumes the same way, so the detector and network experiments train and test on the same images.
# Needs: canopy, data (the synthseg-label-maps folder), out.

# synthseg_training_set COPIES SUBJECT...: synthesizes COPIES images per subject and sets the array
# `train` to their --image/--label pairs. Seeds: SYNTH_SEEDS=distinct (the default since 2026-11-24) gives
# every image its own seed, 100000 + 1000 x S + k (never a test seed 9<S>). SYNTH_SEEDS=shared is the
# scheme of the figures recorded before that day: copy k of subject S has seed 1<S> + k, so neighbouring
# subjects share draws (copy 1 of 01 and copy 0 of 02 both use seed 102: the same contrast, bias, blur,
# noise and transform; 10 subjects x 3 copies hold 12 distinct draws). SYNTH_OPTIONS: extra
# synthesize options for the training images only (e.g. "--contrast-spread 1.5": contrasts more varied
# than the test images', which keep the priors).
synthseg_training_set() {
  local copies=$1 s c image label seed
  shift
  train=()
  for s in "$@"; do
    case ${SYNTH_SEEDS:-distinct} in
      shared) seed=1$s ;;
      distinct) seed=$((100000 + 1000 * 10#$s)) ;;
      *) echo "SYNTH_SEEDS: '${SYNTH_SEEDS}' is neither shared nor distinct" >&2; return 2 ;;
    esac
    # shellcheck disable=SC2086
    "$canopy" synthesize --quiet --label "$data/training_seg_$s.nii.gz" --seed "$seed" --count "$copies" ${SYNTH_OPTIONS:-} \
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
