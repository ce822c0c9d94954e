#!/usr/bin/env bash
# Shape prior + voxel evidence on the MSD Task04 hippocampus (issues 10 and 13): the fully automatic shape
# path of hippocampus-detect-shape.sh (pose detector, shape model, segment-shape from the detected pose;
# its meshes are kept) and a voxel forest (train-forest, 3 classes, auto-context) trained on the same
# training subjects, whose class probabilities (predict-forest --mode distribution) are fused with each
# fitted mesh by `canopy fuse-shape` (log-odds within a band around the mesh, then a graph cut;
# Modules/ShapeFusion). One fit per subject and structure, then every fusion variant of FUSIONS on it.
# Prints per class and variant the mean / median / worst Dice and mean surface distance, next to the
# mesh alone and the voxel map alone (p >= 0.5), and the variant with the highest mean Dice over both
# classes (ties: the smaller mean surface distance). Skipped (77) without the data.
#   hippocampus-shape-fusion.sh CANOPY OUTDIR [TRAIN=160] [TEST=40] [DEVICE=auto] [EXTRA segment-shape options...]
# Environment:
#   VALIDATE=N: test on the N training-part subjects after the first TRAIN (a validation split for choosing
#     the fusion; the held-out 40 are not read). Choose on it, then run the full split with FUSIONS set
#     to the chosen variant only.
#   FUSIONS: fuse-shape option sets separated by '|' (a set prefixed "joint:" fuses both structures' meshes of
#     a subject at once into one label map, fuse-shape --mesh A --label 1 --mesh P --label 2, each class
#     evaluated from it); default: a grid over the voxel weight w, the prior's
#     width s and the graph cut's lambda (band 3 mm). At lambda 0 only the product w s matters (the sign of
#     w logit(p) - d / s); on a 10-subject CPU check with a forest of 20 subjects (docs/ACCURACY.md) small
#     products (0.05-0.25) were about neutral and w = 1, s = 1, lambda = 0.3 lost 0.04-0.07 Dice, so the
#     grid leans to small weights and lambdas.
#   JOINT=1 (default): every FUSIONS set with --fusion-lambda 0 and no "joint:" also runs jointly (a "joint:"
#     row beside it; the joint fusion has no graph cut); JOINT=0: only the sets as given.
#   FOREST_START=1: train the forest before the shape path and give each segment-shape a second start, the
#     pose of its structure in the forest's labels (predict-forest --mode argmax --postprocess largest,fill;
#     segment-shape --start-labels: both starts refined, the second kept when its mean boundary score is
#     higher by more than --start-labels-margin, the only start where the detector finds nothing); for the
#     structures of START_STRUCTURES (default "anterior posterior").
#   FOREST_OPTIONS: train-forest options (default: the forest of scripts/hippocampus-pose-ablation with 3
#     auto-context stages, its best voxel model without pose channels).
#   SHAPE_RUN=DIR: reuse a finished hippocampus-detect-shape.sh run (its split.txt, meshes and evaluations;
#     same TRAIN / TEST / VALIDATE and segment-shape options) instead of step 1: the fusion alone.
#   DETECTOR=FILE / SHAPE_MODEL=FILE / FOREST=FILE: reuse models trained on the same first TRAIN subjects.
#   PROBABILITIES=DIR: reuse the forest's class probabilities of the same test subjects (NAME.nii.gz from a
#     finished run's probabilities/), so fusion variants can be compared on a CPU without the forest.
#   ENSEMBLE_FORESTS: train-forest option sets separated by '|': more forests trained on the same subjects
#     (their class maps in ensemble-K/); a FUSIONS set holding the word ENSEMBLE fuses the mean of the first
#     forest's maps and theirs (the word becomes fuse-shape --ensemble-probabilities, one per forest).
#     ENSEMBLE_PROBABILITIES=DIR[:DIR...]: reuse such maps instead (as PROBABILITIES does).
#   ENSEMBLE_PBT: train-pbt option sets separated by '|': multi-class PBTs (train-pbt --labels 1,2 and the set,
#     e.g. msd-experiment's "--spacing 1 --box-mm 36 --features 1000 --depth 6 --learners 40 --candidates 100
#     --positives 400 --negatives 600 --near-boundary-mm 4 --prior-weights [--auto-context 2 --context-folds 4]")
#     trained on the same subjects, their class maps (segment --class-probabilities-dir) in ensemble-pbt-K/:
#     more ensemble members, after those of ENSEMBLE_FORESTS / ENSEMBLE_PROBABILITIES (either may be set too).
#     ENSEMBLE:I,J,... in a FUSIONS set fuses the first forest's maps with the members I, J (0-based in that
#     order) only, so one run compares ensembles: with ENSEMBLE_FORESTS="A|B" ENSEMBLE_PBT="P", ENSEMBLE:0 is
#     the first forest + A, ENSEMBLE:0,2 adds the PBT, ENSEMBLE:0,1 the forest B, ENSEMBLE all of them.
#   RULE_BASE=N: also print the FUSIONS row (not the mesh or voxel map alone) with the highest posterior mean
#     Dice whose anterior mean Dice is not below that of FUSIONS set N (1-based; ties: the higher mean of both
#     classes), and every row's means to five decimals: a selection rule fixed before the run.
#   JOBS: parallel fuse-shape / evaluate runs (default: the CPU count).
#   FLOORS="DICE_ANTERIOR DICE_POSTERIOR MSD_ANTERIOR MSD_POSTERIOR": fail (exit 1) when the best variant's
#     mean Dice of a class is below its floor or its mean surface distance above its ceiling.
set -euo pipefail
canopy=$(realpath "$1"); out=$2; train=${3:-160}; test=${4:-40}; device=${5:-auto}; shift $(( $# < 5 ? $# : 5 ))
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}
[ -f "$data/Task04_Hippocampus/dataset.json" ] || { echo "SKIP: $data/Task04_Hippocampus/dataset.json not found (set CANOPY_DATA_DIR)"; exit 77; }
IFS='|' read -r -a fusions <<< "${FUSIONS-"--fusion-voxel-weight 0.1 --fusion-width 0.5 --fusion-lambda 0|--fusion-voxel-weight 0.25 --fusion-width 0.5 --fusion-lambda 0|--fusion-voxel-weight 0.5 --fusion-width 0.5 --fusion-lambda 0|--fusion-voxel-weight 1 --fusion-width 0.5 --fusion-lambda 0|--fusion-voxel-weight 1 --fusion-width 1 --fusion-lambda 0|--fusion-voxel-weight 0.25 --fusion-width 0.5 --fusion-lambda 0.1|--fusion-voxel-weight 0.5 --fusion-width 0.5 --fusion-lambda 0.1|--fusion-voxel-weight 0.5 --fusion-width 1 --fusion-lambda 0.1|--fusion-voxel-weight 1 --fusion-width 1 --fusion-lambda 0.3"}"
rm -rf "$out"; mkdir -p "$out/probabilities" "$out/links" "$out/fused"
seconds() { python3 -c 'import time; print(time.time())'; }
train_forest() { # the first forest on the training subjects of split file $1 (or FOREST)
  if [ -n "${FOREST:-}" ]; then
    cp "$FOREST" "$out/forest.json"
  else
    local args=()
    while read -r tag image label; do [ "$tag" = train ] && args+=(--image "$image" --label "$label"); done < "$1"
    # shellcheck disable=SC2086
    "$canopy" train-forest "${args[@]}" --classes 3 ${FOREST_OPTIONS:---trees 8 --depth 16 --features 60 --samples-per-image 2000 --sampling uniform --channels intensity,gaussian:1,gradient:1,log:2 --auto-context 3} \
      --split-seed 1 --device "$device" --quiet --out "$out/forest.json" > "$out/train-forest.log"
  fi
}
link_tests() { # the test images of split file $1 in links/ (once)
  [ -z "$(ls -A "$out/links")" ] || return 0
  while read -r tag image label; do [ "$tag" = test ] && ln -s "$image" "$out/links/"; done < "$1"
}

# 0. FOREST_START=1: the forest first; its labels (argmax, largest piece per class, holes filled) of each
# test subject give segment-shape a second start (--start-labels; START_LABELS of hippocampus-detect-shape.sh).
forest_ready=
if [ "${FOREST_START:-0}" = 1 ] && [ -z "${SHAPE_RUN:-}" ]; then
  if [ -n "${VALIDATE:-}" ]; then # the split as hippocampus-detect-shape.sh writes it
    python3 "$here/msd-split.py" "$data/Task04_Hippocampus/dataset.json" $((train + VALIDATE)) 0 |
      awk -v n="$train" '{ if (NR > n) $1 = "test"; print }' > "$out/forest-split.txt"
  else
    python3 "$here/msd-split.py" "$data/Task04_Hippocampus/dataset.json" "$train" "$test" > "$out/forest-split.txt"
  fi
  t0=$(seconds)
  train_forest "$out/forest-split.txt"; link_tests "$out/forest-split.txt"; forest_ready=1
  "$canopy" predict-forest --model "$out/forest.json" --inputs "$out/links" --output-dir "$out/forest-labels" \
    --mode argmax --postprocess largest,fill --device "$device" --quiet > "$out/predict-forest-labels.log"
  export START_LABELS=$out/forest-labels
  echo "forest (for the second starts): $(python3 -c "print(round($(seconds) - $t0))") s (wall)"
fi

# 1. The shape path (detector, shape model, segment-shape from the detected pose): meshes and label maps.
if [ -n "${SHAPE_RUN:-}" ]; then
  ln -s "$(realpath "$SHAPE_RUN")" "$out/shape"; echo "shape path: $SHAPE_RUN" | tee "$out/shape.log"
else
  FLOORS= "$here/hippocampus-detect-shape.sh" "$canopy" "$out/shape" "$train" "$test" "$device" "$@" | tee "$out/shape.log" || true
fi
split=$out/shape/split.txt

# 2. The voxel forest on the same training subjects, class probabilities of the test subjects.
t0=$(seconds)
if [ -n "${PROBABILITIES:-}" ]; then
  echo "forest: the probabilities of $PROBABILITIES" > "$out/predict-forest.log"
elif [ -z "$forest_ready" ]; then
  train_forest "$split"
fi
if [ -n "${PROBABILITIES:-}" ]; then
  rmdir "$out/probabilities"; ln -s "$(realpath "$PROBABILITIES")" "$out/probabilities"
else
  link_tests "$split"
  "$canopy" predict-forest --model "$out/forest.json" --inputs "$out/links" --output-dir "$out/probabilities" \
    --mode distribution --device "$device" --quiet > "$out/predict-forest.log"
fi
# More forests for the ensemble variants (ENSEMBLE in a FUSIONS set), on the same subjects.
ensembles=()
if [ -n "${ENSEMBLE_PROBABILITIES:-}" ]; then
  IFS=':' read -r -a ensembles <<< "$ENSEMBLE_PROBABILITIES"
  for k in "${!ensembles[@]}"; do ensembles[$k]=$(realpath "${ensembles[$k]}"); done
elif [ -n "${ENSEMBLE_FORESTS:-}" ]; then
  IFS='|' read -r -a forests <<< "$ENSEMBLE_FORESTS"
  for k in "${!forests[@]}"; do
    args=()
    while read -r tag image label; do [ "$tag" = train ] && args+=(--image "$image" --label "$label"); done < "$split"
    # shellcheck disable=SC2086
    "$canopy" train-forest "${args[@]}" --classes 3 ${forests[$k]} --split-seed 1 --device "$device" --quiet \
      --out "$out/ensemble-$k.json" > "$out/train-ensemble-$k.log"
    link_tests "$split"
    "$canopy" predict-forest --model "$out/ensemble-$k.json" --inputs "$out/links" --output-dir "$out/ensemble-$k" \
      --mode distribution --device "$device" --quiet > "$out/predict-ensemble-$k.log"
    ensembles+=("$out/ensemble-$k")
  done
fi
if [ -n "${ENSEMBLE_PBT:-}" ]; then # multi-class PBTs: more members after the forests
  IFS='|' read -r -a pbts <<< "$ENSEMBLE_PBT"
  for k in "${!pbts[@]}"; do
    t2=$(seconds); args=()
    while read -r tag image label; do [ "$tag" = train ] && args+=(--image "$image" --label "$label"); done < "$split"
    # shellcheck disable=SC2086
    "$canopy" train-pbt "${args[@]}" --labels 1,2 ${pbts[$k]} --device "$device" --quiet \
      --out "$out/ensemble-pbt-$k.json" > "$out/train-ensemble-pbt-$k.log"
    link_tests "$split"
    "$canopy" segment --model "$out/ensemble-pbt-$k.json" --inputs "$out/links" --output-dir "$out/ensemble-pbt-$k-labels" \
      --class-probabilities-dir "$out/ensemble-pbt-$k" --device "$device" --quiet > "$out/segment-ensemble-pbt-$k.log"
    ensembles+=("$out/ensemble-pbt-$k")
    echo "PBT ensemble member $k: training and class maps $(python3 -c "print(round($(seconds) - $t2))") s (wall)"
  done
fi
t1=$(seconds)
echo "forest: training and prediction $(python3 -c "print(round($t1 - $t0))") s (wall)"

# 3. Every fusion variant (and the voxel map alone) on every fitted mesh, evaluated. A joint variant: one
# fuse-shape per subject with both meshes (or the one found), each class evaluated from its one map.
variants=("--fusion-voxel-weight 1 --fusion-width 1e6 --fusion-band 1e6 --fusion-lambda 0" "${fusions[@]}")
if [ "${JOINT:-1}" = 1 ]; then
  for f in "${fusions[@]}"; do
    [[ $f != joint:* && $f =~ --fusion-lambda[[:space:]]+0([[:space:]]|$) ]] || continue
    printf '%s\n' "${variants[@]}" | grep -qxF "joint:$f" || variants+=("joint:$f")
  done
fi
ensemble_word=' ENSEMBLE(:[0-9]+(,[0-9]+)*)? '
jobs=$out/jobs.txt; : > "$jobs"
while read -r tag image label; do
  [ "$tag" = test ] || continue
  name=$(basename "$image" .nii.gz)
  for k in "${!variants[@]}"; do
    variant=${variants[$k]}
    if [[ " $variant " =~ $ensemble_word ]]; then # ENSEMBLE (every member) or ENSEMBLE:I,J (those members)
      word=${BASH_REMATCH[0]}; word=${word# }; word=${word% }
      [ ${#ensembles[@]} -gt 0 ] || { echo "FUSIONS set [$variant] names $word: set ENSEMBLE_FORESTS, ENSEMBLE_PROBABILITIES or ENSEMBLE_PBT" >&2; exit 2; }
      members=("${!ensembles[@]}"); [[ $word == ENSEMBLE:* ]] && IFS=',' read -r -a members <<< "${word#ENSEMBLE:}"
      ensemble=
      for m in "${members[@]}"; do
        [ -n "${ensembles[$m]:-}" ] || { echo "FUSIONS set [$variant]: no ensemble member $m (there are ${#ensembles[@]}: ${ensembles[*]})" >&2; exit 2; }
        ensemble+=" --ensemble-probabilities \"${ensembles[$m]}/$name.nii.gz\""
      done
      variant=" $variant "; variant=${variant/ $word / $ensemble }; variant=${variant# }; variant=${variant% }
    fi
    if [[ $variant == joint:* ]]; then
      o=$out/fused/$name-joint-f$k; meshes=; evaluations=
      for s in anterior:1 posterior:2; do
        structure=${s%:*}; value=${s#*:}
        [ -f "$out/shape/$name-$structure.vtk" ] || continue
        meshes+=" --mesh \"$out/shape/$name-$structure.vtk\" --label $value"
        evaluations+=" && \"$canopy\" evaluate --test \"$o.nii.gz\" --reference \"$label\" --labels $value --json \"$out/fused/$name-$structure-f$k-evaluate.json\" > /dev/null"
      done
      [ -n "$meshes" ] || continue
      echo "\"$canopy\" fuse-shape$meshes --probabilities \"$out/probabilities/$name.nii.gz\" ${variant#joint:} --output \"$o.nii.gz\" --report \"$o-report.json\" > /dev/null 2> \"$o-error.txt\"$evaluations && rm -f \"$o-error.txt\" \"$o.nii.gz\"" >> "$jobs"
      continue
    fi
    for s in anterior:1 posterior:2; do
      structure=${s%:*}; value=${s#*:}
      [ -f "$out/shape/$name-$structure.vtk" ] || continue
      o=$out/fused/$name-$structure-f$k
      echo "\"$canopy\" fuse-shape --mesh \"$out/shape/$name-$structure.vtk\" --probabilities \"$out/probabilities/$name.nii.gz\" --label $value $variant --output \"$o.nii.gz\" --report \"$o-report.json\" > /dev/null 2> \"$o-error.txt\" && \"$canopy\" evaluate --test \"$o.nii.gz\" --reference \"$label\" --labels $value --json \"$o-evaluate.json\" > /dev/null && rm -f \"$o-error.txt\" \"$o.nii.gz\"" >> "$jobs"
    done
  done
done < "$split"
t0=$(seconds)
tr '\n' '\0' < "$jobs" | xargs -0 -P "${JOBS:-$(nproc)}" -I{} bash -c {} || true
t1=$(seconds)
echo "fusion and evaluation: $(wc -l < "$jobs") runs, $(python3 -c "print(round($t1 - $t0))") s (wall)"

python3 - "$out" "$canopy" "$device" "${RULE_BASE:-0}" ${FLOORS:-0 0 1000 1000} "${variants[@]}" <<'PY'
import json, os, statistics, sys
out, canopy, device = sys.argv[1:4]
rule_base = int(sys.argv[4])
floors = dict(anterior=(float(sys.argv[5]), float(sys.argv[7])), posterior=(float(sys.argv[6]), float(sys.argv[8])))
variants = sys.argv[9:]
names = [os.path.basename(l.split()[1])[:-len(".nii.gz")] for l in open(f"{out}/shape/split.txt") if l.startswith("test")]
def summary(paths):
    dice, msd = [], []
    for p in paths:
        if not os.path.exists(p):
            return None
        l = json.load(open(p))["labels"][0]
        dice.append(l["overlap"]["dice"]); msd.append(l["surface"]["meanMm"])
    return dice, msd
def cells(r):
    dice, msd = r
    return (f"{statistics.mean(dice):.3f} / {statistics.median(dice):.3f} / {min(dice):.3f} | "
            f"{statistics.mean(msd):.3f} / {statistics.median(msd):.3f} / {max(msd):.3f}")
print(f"\n{len(names)} test subjects; Dice mean / median / worst | mean surface distance mm mean / median / worst")
missing = {s: [n for n in names if not os.path.exists(f"{out}/shape/{n}-{s}-evaluate.json")] for s in ("anterior", "posterior")}
for s in missing:
    if missing[s]:
        print(f"{s}: not segmented by the shape path (left out of every row): {' '.join(missing[s])}")
print("| variant | anterior Dice | anterior MSD | posterior Dice | posterior MSD |\n|---|---|---|---|---|")
rows = []
labels = ["mesh alone (segment-shape)", "voxel map alone (forest, p >= 0.5)"] + variants[1:]
for k, label in enumerate(labels):
    results = {}
    for s in ("anterior", "posterior"):
        fitted = [n for n in names if os.path.exists(f"{out}/shape/{n}-{s}-evaluate.json")] # the same subjects in every row
        if k == 0:
            results[s] = summary([f"{out}/shape/{n}-{s}-evaluate.json" for n in fitted])
        else:
            results[s] = summary([f"{out}/fused/{n}-{s}-f{k - 1}-evaluate.json" for n in fitted])
    if all(results.values()):
        print(f"| {label} | " + " | ".join(cells(results[s]) for s in ("anterior", "posterior")) + " |")
        if k >= 2:
            rows.append((statistics.mean([statistics.mean(results[s][0]) for s in results]),
                         -statistics.mean([statistics.mean(results[s][1]) for s in results]), k, results))
    else:
        print(f"| {label} | incomplete: a subject was not segmented or fused (see {out}/fused/*-error.txt) |")
if not rows:
    sys.exit("no fusion variant completed on every test subject")
best = max(rows)
print(f"\nbest fusion (highest mean Dice of both classes): [{labels[best[2]]}], mean Dice {best[0]:.3f}")
print(f"full split: FUSIONS=\"{labels[best[2]]}\" CANOPY_DATA_DIR=... Testing/Regression/hippocampus-shape-fusion.sh {canopy} OUT 160 40 {device}")
if rule_base:
    means = {k: tuple(statistics.mean(results[s][0]) for s in ("anterior", "posterior")) for _, _, k, results in rows}
    print("\nmean Dice anterior / posterior to five decimals:")
    for k in sorted(means):
        print(f"  {means[k][0]:.5f} / {means[k][1]:.5f}  [{labels[k]}]")
    base = rule_base + 1 # FUSIONS set N is labels[N + 1] (after the mesh and the voxel map alone)
    if base not in means:
        print(f"RULE_BASE={rule_base}: FUSIONS set {rule_base} did not complete on every subject; no choice")
    else:
        eligible = [k for k in means if means[k][0] >= means[base][0]]
        chosen = max(eligible, key=lambda k: (means[k][1], sum(means[k])))
        print(f"rule (highest posterior mean Dice, anterior not below set {rule_base}'s {means[base][0]:.5f}): "
              f"[{labels[chosen]}], {means[chosen][0]:.5f} / {means[chosen][1]:.5f}")
ok = True
for s in ("anterior", "posterior"):
    dice, msd = best[3][s]
    good = not missing[s] and statistics.mean(dice) >= floors[s][0] and statistics.mean(msd) <= floors[s][1]
    print(("ok  " if good else "FAIL") + f" {s}: mean Dice {statistics.mean(dice):.3f} >= {floors[s][0]}, "
          f"mean surface distance {statistics.mean(msd):.3f} <= {floors[s][1]} mm")
    ok = ok and good
sys.exit(0 if ok else 1)
PY
