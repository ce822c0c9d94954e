#!/usr/bin/env bash
# Choose segment-shape settings for the MSD hippocampus on a VALIDATION split of the training part only
# (issue 10): hippocampus-detect-shape.sh with VALIDATE trains the pose detector and the shape model
# once on the first TRAIN training subjects and segments the next VALIDATE training subjects (the 40
# held-out subjects of the 160/40 split are never read); every further variant reuses those two models
# with other segment-shape options. Prints a table of mean Dice and mean surface distance per class and
# the variant with the highest mean Dice over both classes (ties: the smaller mean surface distance),
# then the command that runs it on the full split. Skipped (77) without the data.
#   hippocampus-shape-validate.sh CANOPY OUTDIR [TRAIN=120] [VALIDATE=40] [DEVICE=auto]
# Environment:
#   VARIANTS: segment-shape option sets separated by '|' (the first may be empty: the defaults); default
#     below. Without DETECTOR and SHAPE_MODEL the first variant trains both models (on the first TRAIN).
#   DETECTOR=FILE / SHAPE_MODEL=FILE: models trained on the same first TRAIN subjects by an earlier run
#     (e.g. VALIDATE=40 hippocampus-detect-shape.sh CANOPY DIR 120 0): every variant reuses them.
set -euo pipefail
canopy=$1; out=$2; train=${3:-120}; validate=${4:-40}; device=${5:-auto}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}
[ -f "$data/Task04_Hippocampus/dataset.json" ] || { echo "SKIP: $data/Task04_Hippocampus/dataset.json not found (set CANOPY_DATA_DIR)"; exit 77; }
IFS='|' read -r -a variants <<< "${VARIANTS-|--free-iterations 2|--free-iterations 4|--start-spread 3 --free-iterations 2|--start-spread 3 --start-margin 0 --free-iterations 2|--start-spread 3 --start-margin 0.01 --free-iterations 2|--start-spread 3 --kept-starts 7 --free-iterations 2}"
rm -rf "$out"; mkdir -p "$out"
detector=${DETECTOR:-}; shape=${SHAPE_MODEL:-}
for k in "${!variants[@]}"; do
  # shellcheck disable=SC2206
  options=(${variants[$k]})
  echo "== variant $k: ${variants[$k]:-(defaults)}"
  DETECTOR=$detector SHAPE_MODEL=$shape VALIDATE=$validate \
    "$here/hippocampus-detect-shape.sh" "$canopy" "$out/v$k" "$train" 0 "$device" "${options[@]}" | tee "$out/v$k.log" || true
  detector=${detector:-$out/v0/detector.json}; shape=${shape:-$out/v0/shape.json} # trained by the first variant
done
python3 - "$out" "${#variants[@]}" "$canopy" "$device" "${variants[@]}" <<'PY'
import re, sys
out, n, canopy, device = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
names = sys.argv[5:5 + n]
rows = []
for k in range(n):
    text = open(f"{out}/v{k}.log").read()
    dice, msd = {}, {}
    for s in ("anterior", "posterior"):
        m = re.search(rf"{s} segmentation: (\d+) of (\d+) segmented; Dice mean ([0-9.]+).*?mean surface distance mm mean ([0-9.]+)", text)
        if m and m.group(1) == m.group(2):
            dice[s], msd[s] = float(m.group(3)), float(m.group(4))
    if len(dice) == 2:
        rows.append((sum(dice.values()) / 2, -sum(msd.values()) / 2, k, dice, msd))
    print(f"variant {k} [{names[k] or 'defaults'}]: " + ("; ".join(
        f"{s} Dice {dice[s]:.3f} MSD {msd[s]:.3f} mm" for s in dice) if len(dice) == 2 else "incomplete (see the log)"))
if not rows:
    sys.exit("no variant segmented every validation subject")
best = max(rows)
print(f"\nbest on the validation split: variant {best[2]} [{names[best[2]] or 'defaults'}], mean Dice {best[0]:.3f}")
print(f"full split: CANOPY_DATA_DIR=... Testing/Regression/hippocampus-detect-shape.sh {canopy} OUT 160 40 {device} {names[best[2]]}")
PY
