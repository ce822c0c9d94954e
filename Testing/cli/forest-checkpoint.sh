#!/usr/bin/env bash
# forest-checkpoint.sh CANOPY WRITE_TEST_VOLUMES DIR [MPIRUN ARGS...]
# train-forest --checkpoint: a run stopped after k trees (CANOPY_TEST_STOP_AFTER_TREES, a test-only
# hook) and rerun with the same arguments writes the uninterrupted run's model byte for byte, and
# removes its checkpoint; a checkpoint of other arguments or inputs, or a corrupt one, is a clear
# error naming the file (--restart discards it); --cv and --auto-context refuse --checkpoint.
# With MPIRUN: the same over 2 processes, and a 2-process checkpoint resumed by one process.
set -euo pipefail
canopy=$1 write=$2 dir=$3
shift 3
mpirun=("$@")
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
"$write" . >/dev/null
fail() { echo "FAIL: $*" >&2; exit 1; }
trees() { grep -o '"nodes":' "$1" | wc -l; } # trees in a model or checkpoint (one-line JSON)
stopped() { # expected status, then the command: it must stop after its checkpoint
  local want=$1 status=0
  shift
  CANOPY_TEST_STOP_AFTER_TREES=$stop "$@" 2> stop.txt || status=$?
  [ "$status" -ne 0 ] || fail "CANOPY_TEST_STOP_AFTER_TREES=$stop did not stop the run"
  [ -z "$want" ] || [ "$status" -eq "$want" ] || fail "stopped with status $status, not $want: $(cat stop.txt)"
  grep -q "stopped after $stop trees" stop.txt || fail "no stop message: $(cat stop.txt)"
}
fails_with() { # message, then the command: exit status in [1, 127] and the message on stderr
  local message=$1 status=0
  shift
  "$@" 2> err.txt || status=$?
  [ "$status" -ge 1 ] && [ "$status" -lt 128 ] || fail "status $status, not an error, for: $*"
  grep -qF -- "$message" err.txt || fail "expected '$message', got: $(cat err.txt)"
}

train=(--trees 4 --depth 6 --features 20 --samples-per-image 300 --device cpu --threads 1 --quiet)
for v in volume.nii volume.nrrd volume.mha volume-gzip.nrrd volume.nii.gz; do train+=(--image "$v" --label label.nii.gz); done
"$canopy" train-forest "${train[@]}" --out one.json
[ "$(trees one.json)" -eq 4 ] || fail "one.json has $(trees one.json) trees, not 4"

if [ ${#mpirun[@]} -eq 0 ]; then
  # stopped after 2 of 4 trees: the checkpoint (OUT.partial by default) holds 2, no model; resumed: one.json
  stop=2 stopped 75 "$canopy" train-forest "${train[@]}" --out resumed.json --checkpoint
  [ ! -e resumed.json ] || fail "a stopped run wrote its model"
  [ "$(trees resumed.json.partial)" -eq 2 ] || fail "the checkpoint holds $(trees resumed.json.partial) trees, not 2"
  "$canopy" train-forest "${train[@]}" --out resumed.json --checkpoint > out.txt
  grep -q "resuming from resumed.json.partial: 2 of 4 trees grown" out.txt || fail "did not resume: $(cat out.txt)"
  cmp -s one.json resumed.json || fail "the resumed forest differs from the uninterrupted one"
  [ ! -e resumed.json.partial ] || fail "the checkpoint was left behind"
  # every tree but the model: nothing to grow
  stop=4 stopped 75 "$canopy" train-forest "${train[@]}" --out all.json --checkpoint all.ckpt
  "$canopy" train-forest "${train[@]}" --out all.json --checkpoint all.ckpt > out.txt
  grep -q "4 of 4 trees grown" out.txt || fail "did not resume: $(cat out.txt)"
  cmp -s one.json all.json || fail "resuming a complete checkpoint gave another forest"

  # other arguments or inputs: an error naming the file and the difference; nothing written
  stop=1 stopped 75 "$canopy" train-forest "${train[@]}" --out other.json --checkpoint ck.json
  fails_with "--checkpoint ck.json was made by another training: seed: 1 in the checkpoint, 2 now" \
    "$canopy" train-forest "${train[@]}" --seed 2 --out other.json --checkpoint ck.json
  [ ! -e other.json ] || fail "a model was written despite the mismatching checkpoint"
  touch -r volume.mha stamp && touch -d '2001-01-01' volume.mha
  fails_with "(volume.mha).imageFile.modified" \
    "$canopy" train-forest "${train[@]}" --out other.json --checkpoint ck.json
  touch -r stamp volume.mha
  "$canopy" train-forest "${train[@]}" --seed 2 --out other.json --checkpoint ck.json --restart
  "$canopy" train-forest "${train[@]}" --seed 2 --out direct.json
  cmp -s other.json direct.json || fail "--restart did not train afresh"
  [ ! -e ck.json ] || fail "--restart left the checkpoint behind"

  # a corrupt checkpoint: an error naming it, nothing written
  stop=1 stopped 75 "$canopy" train-forest "${train[@]}" --out corrupt.json --checkpoint
  head -c 300 corrupt.json.partial > cut && mv cut corrupt.json.partial
  fails_with "--checkpoint corrupt.json.partial: cannot resume: corrupt.json.partial: not valid JSON" \
    "$canopy" train-forest "${train[@]}" --out corrupt.json --checkpoint
  [ ! -e corrupt.json ] || fail "a model was written from a corrupt checkpoint"
  "$canopy" train-forest "${train[@]}" --out one-copy.json
  cp one-copy.json corrupt.json.partial # a model is not a checkpoint
  fails_with "not a forest checkpoint" "$canopy" train-forest "${train[@]}" --out corrupt.json --checkpoint

  fails_with "--cv and --auto-context K > 1 are not checkpointed" \
    "$canopy" train-forest "${train[@]}" --auto-context 2 --out cascade.json --checkpoint
  fails_with "--restart discards a checkpoint" "$canopy" train-forest "${train[@]}" --out x.json --restart
  echo "checkpoint: stopped and resumed runs give the uninterrupted forest; mismatches and corrupt files are errors"
  exit 0
fi

# 2 processes stopped after 2 trees, resumed by 2 processes; stopped after 1, resumed by one process
stop=2 stopped "" "${mpirun[@]}" -np 2 "$canopy" train-forest "${train[@]}" --out two.json --checkpoint --distributed
[ ! -e two.json ] || fail "a stopped 2-process run wrote its model"
[ "$(trees two.json.partial)" -eq 2 ] || fail "the checkpoint holds $(trees two.json.partial) trees, not 2"
"${mpirun[@]}" -np 2 "$canopy" train-forest "${train[@]}" --out two.json --checkpoint --distributed > out.txt
grep -q "2 of 4 trees grown" out.txt || fail "did not resume: $(cat out.txt)"
cmp -s one.json two.json || fail "the resumed 2-process forest differs from the uninterrupted one"
[ ! -e two.json.partial ] || fail "the 2-process run left its checkpoint behind"
stop=1 stopped "" "${mpirun[@]}" -np 2 "$canopy" train-forest "${train[@]}" --out mixed.json --checkpoint --distributed
"$canopy" train-forest "${train[@]}" --out mixed.json --checkpoint > out.txt
grep -q "1 of 4 trees grown" out.txt || fail "did not resume: $(cat out.txt)"
cmp -s one.json mixed.json || fail "a 2-process checkpoint resumed by one process gave another forest"
echo "2 processes: stopped and resumed runs give the uninterrupted forest, also resumed by one process"
