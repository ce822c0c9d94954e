#!/usr/bin/env bash
# batch-segment.sh CANOPY WRITE_TEST_VOLUMES DIR [MPIRUN ARGS...]
# segment --inputs FOLDER --output-dir DIR writes what segmenting the volumes one by one writes, byte for
# byte; a broken volume is reported and skipped (exit non-zero, the others written, nothing for it);
# options a batch cannot honour are refused. With MPIRUN: the batch over 2 processes equals one by one.
set -euo pipefail
canopy=$1 write=$2 dir=$3
shift 3
mpirun=("$@")
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
"$write" . >/dev/null
fail() { echo "FAIL: $*" >&2; exit 1; }

"$canopy" train-pbt --image volume.nii.gz --label label.nii.gz --out pbt.json --device cpu --quiet --depth 2 \
  --learners 3 --features 30 --positives 60 --negatives 60 --spacing 1 --box-mm 4 --lambda-volumes 1 >/dev/null
mkdir in one-by-one
cp volume.nii.gz in/a.nii.gz; cp volume.nrrd in/b.nrrd; cp volume.mha in/c.mha; cp volume-gzip.nrrd in/d.nrrd
for f in in/*; do
  name=$(basename "$f"); name=${name%%.*}
  "$canopy" segment --model pbt.json --input "$f" --output "one-by-one/$name.nii.gz" --device cpu --quiet >/dev/null
done
same_as_one_by_one() { # output folder
  for f in one-by-one/*; do cmp -s "$f" "$1/$(basename "$f")" || fail "$1/$(basename "$f") differs from $f"; done
}

if [ ${#mpirun[@]} -eq 0 ]; then
  "$canopy" segment --model pbt.json --inputs in --output-dir batch --device cpu --quiet --report batch.json >/dev/null
  same_as_one_by_one batch
  grep -q '"ok": 4' batch.json || fail "the report does not count 4 segmented volumes"
  head -c 200 volume.nii.gz > in/broken.nii.gz
  if "$canopy" segment --model pbt.json --inputs in --output-dir batch2 --device cpu --quiet \
      --report batch2.json > out.txt 2> err.txt; then fail "a broken volume, yet exit 0"; fi
  grep -q "1 of 5 volumes failed" err.txt || fail "no summary of the failure: $(cat err.txt)"
  grep -q "broken.nii.gz: FAILED" out.txt || fail "the broken volume's line is missing: $(cat out.txt)"
  grep -q '"failed": 1' batch2.json || fail "the report does not count the failed volume"
  [ ! -e batch2/broken.nii.gz ] || fail "an output for the broken volume"
  same_as_one_by_one batch2
  if "$canopy" segment --model pbt.json --inputs in --output-dir batch3 --mesh m.vtk 2> err.txt; then
    fail "--mesh with --inputs was accepted"
  fi
  grep -q "\-\-mesh: not with --inputs" err.txt || fail "no clear error for --mesh: $(cat err.txt)"
  if "$canopy" segment --model pbt.json --input in/a.nii.gz --output x.nii.gz --distributed 2> err.txt; then
    fail "--distributed without --inputs was accepted"
  fi
  grep -q "spreads a batch" err.txt || fail "no clear error for --distributed: $(cat err.txt)"
  echo "segment batch: one by one equals the batch; a broken volume is reported and skipped"
  exit 0
fi

"${mpirun[@]}" -np 2 "$canopy" segment --model pbt.json --inputs in --output-dir batch --device cpu --quiet \
  --report batch.json --distributed >/dev/null
same_as_one_by_one batch
grep -q '"rank": 1' batch.json || fail "rank 1 segmented nothing"
echo "segment batch over 2 processes equals one by one"
