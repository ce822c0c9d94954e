#!/usr/bin/env bash
# forest-normalize.sh CANOPY WRITE_TEST_VOLUMES DIR
# train-forest --normalize (default percentile): the forest and the cascade files carry the normalisation (and the versions that
# earlier readers refuse), the report names it, CBOR keeps it, predict-forest applies it from the file
# (the label map of a normalised model differs from the raw one's), and bad values are refused by name.
set -euo pipefail
canopy=$1 write=$2 dir=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
"$write" . >/dev/null
fail() { echo "FAIL: $*" >&2; exit 1; }
training=("$canopy" train-forest --image volume.nii.gz --label label.nii.gz --trees 3 --depth 6 --features 10
  --samples-per-image 400 --channels intensity,gaussian:1 --device cpu --threads 1 --quiet)
train() { "${training[@]}" "$@"; }
predict() { "$canopy" predict-forest --input volume.nii.gz --device cpu --quiet --mode distribution "$@"; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(eval('d' + sys.argv[2])))" "$@"; }

train --out forest.json --report report.json # percentile is the default
[ "$(field forest.json '["version"]')" = 2 ] || fail "a normalised forest is not version 2"
[ "$(field forest.json '["normalization"]["method"]')" = '"percentile"' ] || fail "forest.json has no percentile normalization"
[ "$(field report.json '["parameters"]["normalization"]')" = '"percentile"' ] || fail "the report does not name the normalization"
train --normalize none --out raw.json
[ "$(field raw.json '["version"]')" = 1 ] || fail "a forest without normalisation is not version 1"
grep -q normalization raw.json && fail "raw.json has a normalization"
train --normalize window --window 0 200 --image volume.nii.gz --label label.nii.gz --auto-context 2 --context-folds 2 \
  --out cascade.json
[ "$(field cascade.json '["version"]')" = 3 ] || fail "a normalised cascade is not version 3"
[ "$(field cascade.json '["normalization"]')" = '{"method": "window", "windowHigh": 200.0, "windowLow": 0.0}' ] ||
  fail "cascade.json: $(field cascade.json '["normalization"]')"

# The reports show the intensities mapped to 0 and 1: the same for the volume in training and prediction.
predict --model forest.json --output forest-report.nrrd --report predict-report.json
[ "$(field report.json '["normalization"]["train"][0]["mappedToZeroAndOne"]')" = \
  "$(field predict-report.json '["normalization"]["mappedToZeroAndOne"][0]')" ] ||
  fail "training and prediction report other ranges: $(field report.json '["normalization"]') / $(field predict-report.json '["normalization"]')"
python3 -c "
import json; r = json.load(open('predict-report.json'))['normalization']
low, high = r['mappedToZeroAndOne'][0]
assert r['method'] == 'percentile' and low < high, r" || fail "predict-forest's report: no sensible range"
for model in forest cascade; do
  "$canopy" convert-model --model $model.json --out $model.cbor --quiet
  predict --model $model.json --output $model-json.nrrd
  predict --model $model.cbor --output $model-cbor.nrrd
  cmp -s $model-json.nrrd $model-cbor.nrrd || fail "$model: the CBOR model predicts another distribution"
done
# The file's normalisation is applied: the same trees without the field read other channels.
python3 -c "
import json; d = json.load(open('forest.json')); del d['normalization']; d['version'] = 1
json.dump(d, open('stripped.json', 'w'))"
predict --model stripped.json --output stripped.nrrd
cmp -s forest-json.nrrd stripped.nrrd && fail "predict-forest ignored the model's normalization"

"$here/expect-error.sh" "--window: give LOW HIGH with LOW < HIGH" "${training[@]}" --normalize window --window 5 1 --out bad.json
"$here/expect-error.sh" "--window applies to --normalize window \\(given: --normalize percentile\\)" "${training[@]}" \
  --normalize percentile --window -100 300 --out bad.json
"$here/expect-error.sh" "--normalize: gamma not in" "${training[@]}" --normalize gamma --out bad.json
python3 -c "
import json; d = json.load(open('forest.json')); d['normalization'] = {'method': 'window', 'windowLow': 3, 'windowHigh': 3}
json.dump(d, open('corrupt.json', 'w'))"
"$here/expect-error.sh" 'corrupt.json: "normalization": a "window" normalization needs numbers windowLow < windowHigh' \
  "$canopy" predict-forest --input volume.nii.gz --device cpu --quiet --model corrupt.json --output corrupt.nrrd
echo "forest-normalize: files, report, CBOR, prediction and errors checked"
