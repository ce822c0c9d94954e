#!/usr/bin/env bash
# forest-threshold.sh CANOPY WRITE_TEST_VOLUMES DIR
# The operating point of a forest's labels: predict-forest --threshold T labels exactly the voxels whose
# foreground probability (1 - p(background), of --mode distribution) reaches T, as evaluate --thresholds
# scores them on the distribution, also after --postprocess on both sides; T = 0.5 equals argmax; a
# higher T labels fewer voxels; bad uses are errors naming the option.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
canopy=$1 write=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
"$write" . >/dev/null
fail() { echo "FAIL: $*" >&2; exit 1; }
# A weak forest (shallow, few features), so that the probabilities spread between 0 and 1.
"$canopy" train-forest --image volume.nii.gz --label label.nii.gz --trees 5 --depth 4 --features 10 \
  --sampling balanced --samples-per-image 200 --device cpu --threads 1 --quiet --out forest.json
predict() { "$canopy" predict-forest --model forest.json --input volume.nii.gz --device cpu --quiet "$@"; }
predict --mode distribution --output distribution.nrrd
predict --output argmax.nii.gz
thresholds=(0.2 0.5 0.8)
for t in "${thresholds[@]}"; do
  predict --threshold "$t" --output "labels-$t.nii.gz" --report "report-$t.json"
  grep -q "\"foregroundThreshold\": $t" "report-$t.json" || fail "the report does not give the threshold $t"
  python3 - "report-$t.json" <<'PY' || fail "report-$t.json: the step times"
import json, math, sys
s = json.load(open(sys.argv[1]))["seconds"]  # where predict-forest's time went
steps = ("readModel", "readInput", "predict", "channels", "threshold", "postprocess", "write")
bad = [k for k in steps if not (isinstance(s.get(k), float) and math.isfinite(s[k]) and s[k] >= 0)]
if bad or len(s["forest"]) != 1 or not s["channels"] + s["forest"][0] <= s["predict"] or "context" in s:
    sys.exit(f"{sys.argv[1]}: seconds {s}: missing or wrong {bad}")
PY
  "$canopy" evaluate --test "labels-$t.nii.gz" --reference label.nii.gz --json "labels-$t.json" >/dev/null
  predict --threshold "$t" --postprocess largest,fill --output "cleaned-$t.nii.gz"
  "$canopy" evaluate --test "cleaned-$t.nii.gz" --reference label.nii.gz --json "cleaned-$t.json" >/dev/null
done
"$canopy" evaluate --test distribution.nrrd --reference label.nii.gz --thresholds 0.2,0.5,0.8 --json sweep.json >/dev/null
"$canopy" evaluate --test distribution.nrrd --reference label.nii.gz --thresholds 0.2,0.5,0.8 --postprocess largest,fill \
  --json cleaned-sweep.json >/dev/null
"$canopy" evaluate --test argmax.nii.gz --reference label.nii.gz --json argmax.json >/dev/null
python3 - "${thresholds[@]}" <<'PY'
import json, sys
sweep = {round(s["threshold"], 6): s["metrics"] for s in json.load(open("sweep.json"))["sweep"]}
volumes = []
for t in sys.argv[1:]:
    labels = json.load(open(f"labels-{t}.json"))["metrics"]
    swept = sweep[round(float(t), 6)]
    for key in ("dice", "volumeTestMm3"):
        if abs(labels[key] - swept[key]) > 1e-9:
            sys.exit(f"FAIL: threshold {t}: {key} {labels[key]} from predict-forest --threshold, {swept[key]} from evaluate --thresholds")
    if labels["surface"]["meanMm"] != swept["surface"]["meanMm"]:
        sys.exit(f"FAIL: threshold {t}: the surface distances differ")
    volumes.append(labels["volumeTestMm3"])
if not volumes[0] > volumes[1] > volumes[2]:
    sys.exit(f"FAIL: foreground volumes at thresholds {sys.argv[1:]}: {volumes}, not falling (the forest is too sure to test)")
argmax = json.load(open("argmax.json"))["metrics"]
if abs(argmax["volumeTestMm3"] - sweep[0.5]["volumeTestMm3"]) > 1e-9:
    sys.exit(f"FAIL: argmax labels {argmax['volumeTestMm3']} mm3, threshold 0.5 {sweep[0.5]['volumeTestMm3']} mm3")
# --postprocess: predict-forest's cleaned labels at T equal evaluate's sweep cleaned alike, and the
# clean-up changes something at one threshold at least (else this phantom could not tell).
cleaned = {round(s["threshold"], 6): s["metrics"] for s in json.load(open("cleaned-sweep.json"))["sweep"]}
changed = 0
for t in sys.argv[1:]:
    labels, swept = json.load(open(f"cleaned-{t}.json"))["metrics"], cleaned[round(float(t), 6)]
    if labels["volumeTestMm3"] != swept["volumeTestMm3"] or labels["surface"]["meanMm"] != swept["surface"]["meanMm"]:
        sys.exit(f"FAIL: threshold {t} with --postprocess largest,fill: predict-forest {labels['volumeTestMm3']} mm3, "
                 f"evaluate {swept['volumeTestMm3']} mm3")
    changed += swept["volumeTestMm3"] != sweep[round(float(t), 6)]["volumeTestMm3"]
if not changed:
    sys.exit("FAIL: --postprocess largest,fill changed no threshold's mask: the phantom cannot test it")
print(f"foreground volumes at {sys.argv[1:]}: {volumes} mm3; --threshold equals the evaluate sweep, also with "
      f"--postprocess ({changed} threshold(s) changed by it); 0.5 equals argmax")
PY
# bad uses: one clear error line naming the option, nothing written (expect-error.sh)
predict_bad() { "$here/expect-error.sh" "$1" "$canopy" predict-forest --model forest.json --input volume.nii.gz \
  --device cpu --quiet --output never.nii.gz "${@:2}"; }
predict_bad "--threshold 1: the foreground probability threshold must lie strictly between 0 and 1" --threshold 1
predict_bad "--threshold 0.5: applies to labels \(--mode argmax\), not to --mode distribution" \
  --threshold 0.5 --mode distribution
"$here/expect-error.sh" "--thresholds" "$canopy" evaluate --test distribution.nrrd --reference label.nii.gz \
  --threshold 0.5 --thresholds 0.4 --json never.json
"$here/expect-error.sh" "--postprocess: 'bogus' in 'largest,bogus' is not a post-processing step" "$canopy" evaluate --test distribution.nrrd \
  --reference label.nii.gz --thresholds 0.4 --postprocess largest,bogus --json never.json
"$here/expect-error.sh" "--postprocess largest: cleans the thresholded --test mask; not with --labels" "$canopy" evaluate \
  --test argmax.nii.gz --reference label.nii.gz --labels all --postprocess largest --json never.json
echo "ok   predict-forest --threshold and evaluate --thresholds agree; bad uses refused"
