#!/usr/bin/env bash
# convert-model.sh CANOPY WRITE_TEST_VOLUMES DIR
# Forest models and cascades as CBOR: train-forest writes CBOR to a ".cbor" --out, convert-model turns
# JSON into CBOR and back, and every form predicts the same distribution, byte for byte. The JSON written
# back from CBOR is the JSON file itself (the same document: nothing rounded on the way).
set -euo pipefail
canopy=$1 write=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
"$write" . >/dev/null
fail() { echo "FAIL: $*" >&2; exit 1; }
train() { "$canopy" train-forest --image volume.nii.gz --label label.nii.gz --trees 3 --depth 6 --features 10 \
  --samples-per-image 400 --device cpu --threads 1 --quiet "$@"; }
predict() { "$canopy" predict-forest --input volume.nii.gz --device cpu --quiet --mode distribution "$@"; }
for kind in forest cascade; do
  extra=() # a cascade takes out-of-fold maps: two training images (the same volume twice)
  [ $kind = cascade ] && extra=(--image volume.nii.gz --label label.nii.gz --auto-context 2 --context-folds 2)
  train "${extra[@]}" --out $kind.json
  train "${extra[@]}" --out $kind-trained.cbor
  "$canopy" convert-model --model $kind.json --out $kind.cbor >convert.log
  grep -q "(CBOR, " convert.log || fail "convert-model did not say it wrote CBOR: $(cat convert.log)"
  "$canopy" convert-model --model $kind.cbor --out $kind-back.json --quiet
  head -c 3 $kind.cbor | od -An -tx1 | grep -q "d9 d9 f7" || fail "$kind.cbor does not start with CBOR's self-describe tag"
  cmp -s $kind.json $kind-back.json || fail "$kind.json -> CBOR -> JSON changed the file"
  cmp -s $kind.cbor $kind-trained.cbor || fail "train-forest --out $kind-trained.cbor differs from the converted JSON"
  [ "$(stat -c %s $kind.cbor)" -lt "$(stat -c %s $kind.json)" ] || fail "$kind.cbor is not smaller than its JSON"
  predict --model $kind.json --output $kind-json.nrrd
  predict --model $kind.cbor --output $kind-cbor.nrrd
  cmp -s $kind-json.nrrd $kind-cbor.nrrd || fail "$kind: the CBOR model predicts another distribution"
done
echo "convert-model: forest and cascade, JSON -> CBOR -> JSON exact, predictions identical"
