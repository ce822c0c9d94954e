#!/usr/bin/env bash
# distributed-forest-gpus.sh CANOPY WRITE_TEST_VOLUMES DIR GPUS MPIRUN [ARGS...]
# On a machine with GPUS GPUs (scripts/run-gpu-tests --gpus N runs it there): train-forest
# --distributed --device cuda over GPUS processes, one GPU each, writes the one-process GPU model byte
# for byte, which is the CPU model; each rank used its own GPU; an auto-context cascade and --cv over
# the GPUs give the CPU's model; predict-forest --inputs over GPUS processes on the GPUs equals
# predicting the volumes one by one.
set -euo pipefail
canopy=$(realpath "$1") write=$(realpath "$2") dir=$3 gpus=$4 # absolute: the script works in DIR
shift 4
mpirun=("$@")
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
"$write" . >/dev/null
fail() { echo "FAIL: $*" >&2; exit 1; }

train=(--trees 4 --depth 10 --features 40 --samples-per-image 2000 --quiet)
for v in volume.nii volume.nrrd volume.mha volume-gzip.nrrd volume.nii.gz volume.nii volume.mha; do
  train+=(--image "$v" --label label.nii.gz)
done
"$canopy" train-forest "${train[@]}" --device cpu --out cpu.json
"$canopy" train-forest "${train[@]}" --device cuda --out gpu.json --report gpu-report.json
cmp -s cpu.json gpu.json || fail "the one-process GPU forest differs from the CPU forest"
"${mpirun[@]}" -np "$gpus" "$canopy" train-forest "${train[@]}" --device cuda --out ranks.json \
  --report ranks-report.json --distributed
cmp -s gpu.json ranks.json || fail "the $gpus-GPU forest differs from the one-GPU forest"
# the default device (auto) too: each process on its own GPU
"${mpirun[@]}" -np "$gpus" "$canopy" train-forest "${train[@]}" --out auto.json --report auto-report.json --distributed
cmp -s gpu.json auto.json || fail "the $gpus-GPU forest (--device auto) differs from the one-GPU forest"
for report in ranks-report.json auto-report.json; do python3 - "$gpus" $report <<'PY'
import json, sys
gpus, report = int(sys.argv[1]), json.load(open(sys.argv[2]))
ranks = report["distributed"]["ranks"]
assert report["distributed"]["processes"] == gpus, report["distributed"]
assert all(r["gpu"] for r in ranks), "a rank searched on the CPU"
devices = sorted(r["device"] for r in ranks)
assert devices == list(range(gpus)), f"ranks did not use one GPU each: {devices}"
print(f"{gpus} ranks on GPUs {devices}, sums through {'NCCL' if all(r['nccl'] for r in ranks) else 'host memory'}, "
      f"{report['distributed']['bytesReduced']} bytes reduced; "
      + ", ".join(f"rank {r['rank']}: {r['trainSeconds']:.2f} s" for r in ranks))
PY
done

# an auto-context cascade (out-of-fold maps on each process's GPU) and cross-validation over the GPUs
context=(--auto-context 2 --context-folds 3 --focus-share 0.3)
"$canopy" train-forest "${train[@]}" "${context[@]}" --device cpu --out cascade-cpu.json
"${mpirun[@]}" -np "$gpus" "$canopy" train-forest "${train[@]}" "${context[@]}" --device cuda --out cascade-ranks.json \
  --distributed
cmp -s cascade-cpu.json cascade-ranks.json || fail "the $gpus-GPU cascade differs from the one-process CPU cascade"
cv=(--cv 2 --grid-depth 4,10)
"$canopy" train-forest "${train[@]}" "${cv[@]}" --device cpu --out cv-cpu.json
"${mpirun[@]}" -np "$gpus" "$canopy" train-forest "${train[@]}" "${cv[@]}" --device cuda --out cv-ranks.json --distributed
cmp -s cv-cpu.json cv-ranks.json || fail "the $gpus-GPU cross-validated model differs from the one-process CPU model"

mkdir in one-by-one
cp volume.nii.gz in/a.nii.gz; cp volume.nrrd in/b.nrrd; cp volume.mha in/c.mha; cp volume-gzip.nrrd in/d.nrrd
for f in in/*; do
  name=$(basename "$f"); name=${name%%.*}
  "$canopy" predict-forest --model gpu.json --input "$f" --output "one-by-one/$name.nii.gz" --device cuda --quiet
done
"${mpirun[@]}" -np "$gpus" "$canopy" predict-forest --model gpu.json --inputs in --output-dir batch --device cuda \
  --quiet --report batch.json --distributed
for f in one-by-one/*; do cmp -s "$f" "batch/$(basename "$f")" || fail "batch/$(basename "$f") differs from $f"; done
python3 - "$gpus" batch.json <<'PY'
import json, sys
gpus, volumes = int(sys.argv[1]), json.load(open(sys.argv[2]))["volumes"]
backend = {}
for v in volumes:
    assert v["status"] == "ok", v
    backend.setdefault(v["rank"], set()).add(v["backend"].split(" ")[0])
assert len(backend) == min(gpus, len(volumes)), f"not every rank predicted: {backend}"
used = [b for bs in backend.values() for b in bs]
assert len(set(used)) == len(used) and all(b.startswith("cuda:") for b in used), f"ranks shared a GPU: {backend}"
print("batch: " + ", ".join(f"rank {r} on {sorted(b)[0]}" for r, b in sorted(backend.items())))
PY
echo "$gpus GPUs: the same forest as one GPU and as the CPU, the same auto-context cascade and cross-validated model" \
  "as the CPU; batch inference over $gpus GPUs equals one by one"
