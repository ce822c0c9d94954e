#!/usr/bin/env bash
# distributed-pbt.sh CANOPY WRITE_TEST_VOLUMES DIR MPIRUN [ARGS...]
# train-pbt --distributed on 2 processes writes the one-process model: the same tree, learners, tables,
# calibrations and chosen lambda, bit for bit (the files differ only in the creation time and the
# lambda selection's seconds); also with augmented copies split over the processes. A rank that cannot
# read its volume stops the run with a clear error and nothing written; what is not distributed is refused.
set -euo pipefail
canopy=$1 write=$2 dir=$3
shift 3
mpirun=("$@")
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
"$write" . >/dev/null
fail() { echo "FAIL: $*" >&2; exit 1; }
same_model() { # a.json b.json: equal but for the creation time and the seconds spent choosing lambda
  python3 - "$1" "$2" <<'PY' || fail "$2 differs from $1"
import json, sys
def load(path):
    m = json.load(open(path))
    m["provenance"].pop("created", None)
    for key in ("classificationSeconds", "graphCutSeconds", "seconds"):
        m["regularization"]["selection"].pop(key, None)
    return m
a, b = load(sys.argv[1]), load(sys.argv[2])
if a != b:
    for key in a:
        if a[key] != b.get(key):
            print(f"first difference under \"{key}\"", file=sys.stderr)
    sys.exit(1)
if len(a["pbt"]["nodes"]) < 3:
    print("the test model is too small to compare", file=sys.stderr); sys.exit(1)
PY
}

train=(--depth 3 --learners 4 --features 40 --candidates 20 --positives 80 --negatives 80 --spacing 1 --box-mm 4
  --min-samples 20 --lambda-volumes 2 --lambda-grid 0 0.5 --device cpu --quiet)
five=()
for v in volume.nii volume.nrrd volume.mha volume-gzip.nrrd volume.nii.gz; do five+=(--image "$v" --label label.nii.gz); done
"$canopy" train-pbt "${train[@]}" "${five[@]}" --out one.json
"${mpirun[@]}" -np 2 "$canopy" train-pbt "${train[@]}" "${five[@]}" --out two.json --report two-report.json --distributed
same_model one.json two.json
python3 - two-report.json <<'PY' || fail "the report lacks the distributed section"
import json, sys
d = json.load(open(sys.argv[1]))["distributed"]
assert d["processes"] == 2 and len(d["ranks"]) == 2 and d["bytesReduced"] > 0, d
assert [r["volumes"] for r in d["ranks"]] == [3, 2], d
PY

# augmented copies are volumes: 2 images x 2 copies over 2 processes; rank 0 reads volume 2 for lambda
aug=(--image volume.nii --label label.nii.gz --image volume.mha --label label.nii.gz --augment 2)
"$canopy" train-pbt "${train[@]}" "${aug[@]}" --out aug-one.json
"${mpirun[@]}" -np 2 "$canopy" train-pbt "${train[@]}" "${aug[@]}" --out aug-two.json --distributed
same_model aug-one.json aug-two.json

head -c 200 volume.nii.gz > broken.nii.gz
if "${mpirun[@]}" -np 2 "$canopy" train-pbt "${train[@]}" --image volume.nii --label label.nii.gz \
    --image broken.nii.gz --label label.nii.gz --out never.json --distributed 2> err.txt; then
  fail "a rank could not read its volume, yet exit 0"
fi
grep -q "loading the training images failed.*broken.nii.gz" err.txt || fail "no clear error: $(cat err.txt)"
[ ! -e never.json ] || fail "a model was written although a rank failed"
if "${mpirun[@]}" -np 2 "$canopy" train-pbt "${train[@]}" "${five[@]}" --classes 1 --out never.json --distributed \
    2> err.txt; then
  fail "a multi-class PBT was accepted with --distributed"
fi
grep -q "not distributed yet" err.txt || fail "no clear error for --classes: $(cat err.txt)"
echo "2 processes: the same PBT as one (also with augmented copies), a failed rank stops the run"
