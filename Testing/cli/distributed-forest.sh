#!/usr/bin/env bash
# distributed-forest.sh CANOPY WRITE_TEST_VOLUMES DIR [MPIRUN ARGS...]
# Without MPIRUN: batch inference (predict-forest --inputs) equals predicting the volumes one by one,
# and a broken volume is reported and skipped (exit non-zero, the others written, nothing for it).
# With MPIRUN (e.g. "mpirun --oversubscribe"): train-forest --distributed on 2 processes writes the
# one-process model byte for byte (an auto-context cascade too, on 2 and 3 processes; --cv with the
# same fold scores), and the batch
# over 2 processes equals the one-by-one outputs.
set -euo pipefail
canopy=$1 write=$2 dir=$3
shift 3
mpirun=("$@")
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
"$write" . >/dev/null
fail() { echo "FAIL: $*" >&2; exit 1; }

train=(--trees 3 --depth 6 --features 20 --samples-per-image 300 --device cpu --threads 1 --quiet)
for v in volume.nii volume.nrrd volume.mha volume-gzip.nrrd volume.nii.gz; do train+=(--image "$v" --label label.nii.gz); done
"$canopy" train-forest "${train[@]}" --out one.json

mkdir in one-by-one
cp volume.nii.gz in/a.nii.gz; cp volume.nrrd in/b.nrrd; cp volume.mha in/c.mha; cp volume-gzip.nrrd in/d.nrrd
for f in in/*; do
  name=$(basename "$f"); name=${name%%.*}
  "$canopy" predict-forest --model one.json --input "$f" --output "one-by-one/$name.nii.gz" --device cpu --quiet
done
same_as_one_by_one() { # output folder
  for f in one-by-one/*; do cmp -s "$f" "$1/$(basename "$f")" || fail "$1/$(basename "$f") differs from $f"; done
}

if [ ${#mpirun[@]} -eq 0 ]; then
  "$canopy" predict-forest --model one.json --inputs in --output-dir batch --device cpu --quiet --report batch.json
  same_as_one_by_one batch
  head -c 200 volume.nii.gz > in/broken.nii.gz
  if "$canopy" predict-forest --model one.json --inputs in --output-dir batch2 --device cpu --quiet \
      --report batch2.json 2> err.txt; then fail "a broken volume, yet exit 0"; fi
  grep -q "1 of 5 volumes failed" err.txt || fail "no summary of the failure: $(cat err.txt)"
  grep -q '"failed": 1' batch2.json || fail "the report does not count the failed volume"
  [ ! -e batch2/broken.nii.gz ] || fail "an output for the broken volume"
  same_as_one_by_one batch2
  echo "batch inference: one by one equals the batch; a broken volume is reported and skipped"
  exit 0
fi

"${mpirun[@]}" -np 2 "$canopy" train-forest "${train[@]}" --out two.json --report two-report.json --distributed
cmp -s one.json two.json || fail "the 2-process forest differs from the one-process forest"
grep -q '"processes": 2' two-report.json || fail "the report has no distributed section"
# auto-context: the cascade over the shards (folds over all the images; a process may hold no image
# outside a fold), with held-out images scored per stage by rank 0
context=(--auto-context 2 --context-folds 3 --test-fraction 0.2 --split-seed 3 --focus-share 0.3)
"$canopy" train-forest "${train[@]}" "${context[@]}" --out cascade-one.json
for np in 2 3; do
  "${mpirun[@]}" -np $np "$canopy" train-forest "${train[@]}" "${context[@]}" --out cascade-$np.json --distributed \
    --report cascade-$np-report.json
  cmp -s cascade-one.json cascade-$np.json || fail "the $np-process cascade differs from the one-process cascade"
  grep -q '"processes": '$np cascade-$np-report.json || fail "the cascade's report has no distributed section"
done
# cross-validation over the shards (--cv): the same fold scores, the same chosen grid point, the same model
cv=(--cv 2 --grid-depth 2,6)
"$canopy" train-forest "${train[@]}" "${cv[@]}" --out cv-one.json --report cv-one-report.json
"${mpirun[@]}" -np 2 "$canopy" train-forest "${train[@]}" "${cv[@]}" --out cv-2.json --report cv-2-report.json --distributed
cmp -s cv-one.json cv-2.json || fail "the 2-process cross-validated model differs from the one-process model"
python3 - cv-one-report.json cv-2-report.json <<'PY' || fail "the 2-process cross-validation scores differ"
import json, sys
one, two = (json.load(open(f))["cv"] for f in sys.argv[1:3])
assert one == two and len(one) == 2, (one, two)
PY
"${mpirun[@]}" -np 2 "$canopy" predict-forest --model one.json --inputs in --output-dir batch --device cpu --quiet \
  --report batch.json --distributed
same_as_one_by_one batch
grep -q '"rank": 1' batch.json || fail "rank 1 predicted nothing"
head -c 200 volume.nii.gz > broken.nii.gz # a rank that cannot read its volume stops the run, nothing written
if "${mpirun[@]}" -np 2 "$canopy" train-forest --image volume.nii --label label.nii.gz --image broken.nii.gz \
    --label label.nii.gz --trees 1 --depth 2 --device cpu --quiet --out never.json --distributed 2> err.txt; then
  fail "a rank could not read its volume, yet exit 0"
fi
grep -q "loading the training images failed.*broken.nii.gz" err.txt || fail "no clear error: $(cat err.txt)"
[ ! -e never.json ] || fail "a model was written although a rank failed"
echo "2 processes: the same forest as one, the same auto-context cascade over 2 and 3, the same cross-validation, batch outputs equal to one-by-one, a failed rank stops the run"
