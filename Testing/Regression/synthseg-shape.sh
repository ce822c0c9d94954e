#!/usr/bin/env bash
# Shape segmentation of SynthSeg structures (issue 10's experiment): images synthesized from the label maps
# of TRAIN_SUBJECTS (COPIES each, seeds 1<subject>; synthseg-common.sh), a pose detector (network with
# the brain stem as root, as synthseg-hdn.sh) and shape models with boundary classifiers (`train-shape
# --boundary`) for STRUCTURES on them; one image of each TEST_SUBJECT (seed 9<subject>) detected once
# (`detect`, errors by `evaluate-poses`) and every structure segmented (`segment-shape --pose`) from
#   detector: the detected pose (fully automatic; a structure the detector misses is counted as not
#             segmented, never given a made-up pose), and/or
#   label:    the pose of the test subject's own label map (`--init-label`: NOT automatic; it separates
#             the refinement's error from the detector's).
# Dice and symmetric mean surface distance (mm) per structure with `canopy evaluate --labels VALUE`
# against the synthesized test label map. Writes summary.tsv and summary.json (per structure and start:
# segmented count, Dice and mean surface distance mean / median / worst, the count of fits segment-shape
# flagged fit_suspect; per fit Dice, MSD and the fit check) and prints the table and every flagged fit.
# Skipped (77) without the data.
#   synthseg-shape.sh CANOPY OUTDIR [COPIES=3] [DEVICE=auto] [EXTRA segment-shape options...]
# Environment:
#   TRAIN_SUBJECTS ("01 02 03 04 05 06 07 08 09 10"), TEST_SUBJECTS ("11 12 13 14 15"): the issue's split.
#     TEST_SUBJECTS="" (set and empty) only trains the models: to split a long run into two commands.
#   STRUCTURES (the 10 below): names from the table below (the brain stem is always the detector's root).
#   STARTS ("detector label"): which starts to segment from.
#   SHAPE_OPTIONS: train-shape options (default below: the training labels' pieces other than the largest
#     are dropped with a warning, which the lateral ventricles and hippocampi need).
#   DETECTOR_OPTIONS (""), DETECT_OPTIONS (""): more train-detector / detect options.
#   DETECTOR=FILE / SHAPE_MODEL=FILE: reuse models trained by an earlier run (same training set); then the
#     training images are not synthesized again.
#   MAX_MSD=MM: fail (exit 1) when a structure's median mean surface distance from the detector's start
#     is above MM or fewer than MIN_SEGMENTED (a fraction, default 0.8) of the structures were segmented.
set -euo pipefail
canopy=$1; out=$2; copies=${3:-3}; device=${4:-auto}; shift $(( $# < 4 ? $# : 4 ))
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}/synthseg-label-maps
if [ ! -f "$data/training_seg_01.nii.gz" ]; then
  echo "SKIP: $data not found (set CANOPY_DATA_DIR to the folder holding synthseg-label-maps)"; exit 77
fi
# Label values: synthseg-label-maps/labels.txt (FreeSurfer's).
declare -A label=([brainstem]=16 [left_thalamus]=10 [right_thalamus]=49 [left_caudate]=11 [right_caudate]=50
  [left_putamen]=12 [right_putamen]=51 [left_hippocampus]=17 [right_hippocampus]=53
  [left_lateral_ventricle]=4 [right_lateral_ventricle]=43)
read -r -a names <<<"${STRUCTURES:-left_hippocampus right_hippocampus left_thalamus right_thalamus left_caudate right_caudate left_putamen right_putamen left_lateral_ventricle right_lateral_ventricle}"
read -r -a starts <<<"${STARTS:-detector label}"
read -r -a trainSubjects <<<"${TRAIN_SUBJECTS:-01 02 03 04 05 06 07 08 09 10}"
read -r -a testSubjects <<<"${TEST_SUBJECTS-11 12 13 14 15}"
shapeStructures=(); detectorStructures=(--structure brainstem=16)
for n in "${names[@]}"; do
  if [ -z "${label[$n]:-}" ] || [ "$n" = brainstem ]; then
    echo "synthseg-shape.sh: STRUCTURES: '$n' is not one of the structures below (the brain stem is the detector's root only)" >&2; exit 2
  fi
  shapeStructures+=(--structure "$n=${label[$n]}"); detectorStructures+=(--structure "$n=${label[$n]}")
done
for model in "${DETECTOR:-}" "${SHAPE_MODEL:-}"; do
  if [ -n "$model" ] && [ "$(cd "$(dirname "$model")" && pwd)" = "$(mkdir -p "$out" && cd "$out" && pwd)" ]; then
    echo "synthseg-shape.sh: DETECTOR / SHAPE_MODEL $model lies in OUTDIR $out, which is emptied first: give another OUTDIR" >&2; exit 2
  fi
done
rm -rf "$out"; mkdir -p "$out"
seconds() { python3 -c 'import time; print(round(time.time()))'; }
# shellcheck source=synthseg-common.sh
. "$here/synthseg-common.sh"
if [ -z "${DETECTOR:-}" ] || [ -z "${SHAPE_MODEL:-}" ]; then
  t0=$(seconds); synthseg_training_set "$copies" "${trainSubjects[@]}"
  echo "synthesis of $((${#train[@]} / 4)) training images: $(($(seconds) - t0)) s"
fi

# 1. The pose detector: the network of synthseg-hdn.sh (brain stem root, the structures its children).
if [ -n "${DETECTOR:-}" ]; then
  cp "$DETECTOR" "$out/detector.json"; echo "detector: $DETECTOR"
else
  python3 - "$out/net.json" "${names[@]}" <<'PY'
import json, sys
json.dump({"structures": [{"name": "brainstem"}] + [{"name": n, "parent": "brainstem"} for n in sys.argv[2:]]},
          open(sys.argv[1], "w"), indent=1)
PY
  t0=$(seconds)
  # shellcheck disable=SC2086
  "$canopy" train-detector --quiet "${train[@]}" "${detectorStructures[@]}" --network "$out/net.json" \
    --device "$device" ${DETECTOR_OPTIONS:-} --out "$out/detector.json" --report "$out/train-detector.json" > "$out/train-detector.log"
  echo "detector training: $(($(seconds) - t0)) s"
fi

# 2. Shape models and boundary classifiers (train-shape's default levels 600 / 1,200 / 2,400 vertices).
if [ -n "${SHAPE_MODEL:-}" ]; then
  cp "$SHAPE_MODEL" "$out/shape.json"; echo "shape model: $SHAPE_MODEL"
else
  t0=$(seconds)
  # shellcheck disable=SC2086
  "$canopy" train-shape "${train[@]}" "${shapeStructures[@]}" --boundary --device "$device" \
    ${SHAPE_OPTIONS---keep-largest-piece} --quiet --out "$out/shape.json" --report "$out/train-shape.json" \
    > "$out/train-shape.log" 2>&1 || { cat "$out/train-shape.log"; exit 1; }
  grep -i warn "$out/train-shape.log" | sort | uniq -c | head -20 || true
  echo "shape models and boundary classifiers: $(($(seconds) - t0)) s"
fi

if [ ${#testSubjects[@]} -eq 0 ]; then
  echo "TEST_SUBJECTS is empty: models trained ($out/detector.json, $out/shape.json), nothing segmented"; exit 0
fi

# 3. Test images: detection, then segmentation of every structure from each start, evaluation.
for s in "${testSubjects[@]}"; do
  synthseg_test_volume "$s"
  # shellcheck disable=SC2086
  "$canopy" detect --quiet --model "$out/detector.json" --input "$out/test$s.nii.gz" --output "$out/poses$s.json" \
    --device "$device" ${DETECT_OPTIONS:-} --report "$out/detect$s.json" > /dev/null
  "$canopy" evaluate-poses --test "$out/poses$s.json" --reference "$out/test-labels$s.nii.gz" "${detectorStructures[@]}" \
    --json "$out/pose-errors$s.json" > /dev/null
  for n in "${names[@]}"; do
    for start in "${starts[@]}"; do
      case $start in
        detector) init=(--pose "$out/poses$s.json") ;;
        label) init=(--init-label "$out/test-labels$s.nii.gz") ;;
        *) echo "synthseg-shape.sh: STARTS: unknown start '$start' (detector or label)" >&2; exit 2 ;;
      esac
      base=$out/$s-$n-$start
      if "$canopy" segment-shape --quiet --shape "$out/shape.json" --structure "$n" --input "$out/test$s.nii.gz" \
        "${init[@]}" --output "$base.nii.gz" --mesh "$base.vtk" --report "$base-report.json" --device "$device" "$@" \
        > /dev/null 2> "$base-error.txt"; then
        rm -f "$base-error.txt"
        "$canopy" evaluate --test "$base.nii.gz" --reference "$out/test-labels$s.nii.gz" --labels "${label[$n]}" \
          --json "$base-evaluate.json" > /dev/null
      else
        echo "subject $s $n from the $start start: not segmented: $(head -c 300 "$base-error.txt")"
      fi
    done
  done
done

python3 - "$out" "${MAX_MSD:-}" "${MIN_SEGMENTED:-0.8}" "${#testSubjects[@]}" "${testSubjects[@]}" "${names[@]}" "--" "${starts[@]}" <<'PY'
import json, os, statistics, sys
out, max_msd, min_segmented, k = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
subjects = sys.argv[5:5 + k]
rest = sys.argv[5 + k:]
names, starts = rest[:rest.index("--")], rest[rest.index("--") + 1:]
def stats(values, worst):
    return [round(statistics.mean(values), 4), round(statistics.median(values), 4), round(worst(values), 4)] if values else [None] * 3
rows, all_rows = [], {}
for start in starts:
    for n in names:
        dice, msd, secs, fits = [], [], [], []
        for s in subjects:
            f = f"{out}/{s}-{n}-{start}-evaluate.json"
            if not os.path.exists(f):
                continue
            l = json.load(open(f))["labels"][0]
            dice.append(l["overlap"]["dice"]); msd.append(l["surface"]["meanMm"])
            report = json.load(open(f"{out}/{s}-{n}-{start}-report.json"))
            secs.append(report["seconds"])
            q = report.get("fitQuality", {})  # segment-shape's fit check (absent before it existed)
            fits.append(dict(subject=s, dice=round(dice[-1], 4), msdMm=round(msd[-1], 4), suspect=report.get("fit_suspect"),
                             surfaceScoreMean=q.get("surfaceScoreMean"), lowScoreShare=q.get("lowScoreShare"),
                             mahalanobis=q.get("mahalanobis")))
        centre = []
        for s in subjects:
            e = next(x for x in json.load(open(f"{out}/pose-errors{s}.json"))["structures"] if x["name"] == n)
            if e["found"]:
                centre.append(e["centerErrorMm"])
        row = dict(structure=n, start=start, segmented=len(dice), subjects=len(subjects),
                   dice=stats(dice, min), msdMm=stats(msd, max), refineSecondsMean=round(statistics.mean(secs), 3) if secs else None,
                   poseFound=len(centre), poseCentreMedianMm=round(statistics.median(centre), 2) if centre else None,
                   suspect=sum(1 for x in fits if x["suspect"]), fits=fits)
        rows.append(row)
    per = [r for r in rows if r["start"] == start]
    med = lambda key: [r[key][1] for r in per if r[key][1] is not None]
    all_rows[start] = dict(segmented=sum(r["segmented"] for r in per), of=sum(r["subjects"] for r in per),
                           medianOfStructureMedianMsdMm=round(statistics.median(med("msdMm")), 4) if med("msdMm") else None,
                           medianOfStructureMedianDice=round(statistics.median(med("dice")), 4) if med("dice") else None)
json.dump(dict(subjects=subjects, structures=rows, overall=all_rows), open(f"{out}/summary.json", "w"), indent=1)
fmt = lambda v, p: "-" if v is None else f"{v:.{p}f}"
with open(f"{out}/summary.tsv", "w") as t:
    t.write("structure\tstart\tsegmented\tdice_mean\tdice_median\tdice_worst\tmsd_mean_mm\tmsd_median_mm\tmsd_worst_mm\tpose_found\tpose_centre_median_mm\trefine_s_mean\tsuspect\n")
    for r in rows:
        t.write("\t".join([r["structure"], r["start"], f"{r['segmented']}/{r['subjects']}"] + [fmt(v, 3) for v in r["dice"]] +
                          [fmt(v, 3) for v in r["msdMm"]] + [f"{r['poseFound']}/{r['subjects']}", fmt(r["poseCentreMedianMm"], 2),
                          fmt(r["refineSecondsMean"], 2), str(r["suspect"])]) + "\n")
print(open(f"{out}/summary.tsv").read(), end="")
for r in rows:  # every fit segment-shape flagged (fit_suspect), with its Dice: does the flag find the failures?
    for x in r["fits"]:
        if x["suspect"]:
            print(f"fit_suspect: subject {x['subject']} {r['structure']} from the {r['start']} start: Dice {x['dice']:.3f}, "
                  f"MSD {x['msdMm']:.2f} mm (surface score {x['surfaceScoreMean']:.3f}, low share {x['lowScoreShare']:.2f}, "
                  f"shape {x['mahalanobis']:.2f} sigma)")
for start, a in all_rows.items():
    print(f"{start} start: {a['segmented']} of {a['of']} segmented; median over structures of the median Dice "
          f"{fmt(a['medianOfStructureMedianDice'], 3)}, of the median mean surface distance {fmt(a['medianOfStructureMedianMsdMm'], 3)} mm")
if max_msd and "detector" in starts:
    per = [r for r in rows if r["start"] == "detector"]
    bad = [r["structure"] for r in per if r["msdMm"][1] is None or r["msdMm"][1] > float(max_msd)]
    a = all_rows["detector"]
    ok = not bad and a["segmented"] >= min_segmented * a["of"]
    print(("ok  " if ok else "FAIL") + f" detector start: median mean surface distance <= {max_msd} mm per structure"
          f" (over: {bad or 'none'}), at least {min_segmented:.0%} segmented")
    sys.exit(0 if ok else 1)
PY
