#!/usr/bin/env bash
# Hierarchical detection network on SynthSeg label maps (issue 9 part 5): one detector trained with a
# network (brain stem root; left/right thalamus, caudate, putamen, hippocampus and lateral ventricle its
# children), detected on held-out subjects several ways: "network" (children under their priors, detect's
# defaults: --prior-weight, --child-hypotheses and the centre refinement --refine-step 1 --refine-reach 2),
# "unrefined" (the network with --refine-step 0: detect's default before 2026-11-24), "box" (the network's search box only: --prior-weight 0
# --child-hypotheses model, the network before its priors scored), "independent" (--ignore-network: every
# structure on the whole volume), and one "w=X" run per weight in PRIOR_WEIGHTS (e.g. "0.25 0.5 1 2 4"; to
# choose the weight on a validation split of the training subjects: TRAIN_SUBJECTS="01 02 03 04 05 06 07"
# TEST_SUBJECTS="08 09 10"); errors per structure and medians for each. Floors (network run): at least
# MIN_FOUND (a fraction, default 0.8) of the structures found, median centre <= MAX_CENTRE mm.
# Skipped (77) without the data.
#   synthseg-hdn.sh CANOPY OUTDIR [COPIES [MAX_CENTRE [MIN_FOUND]]]
# Environment: TRAIN_SUBJECTS (default "01 02 03 04 05 06 07 08 09 10"), TEST_SUBJECTS (default "11 12 13
# 14 15"), STRUCTURES (default: the 11 below, the first the root), TRAIN_OPTIONS (extra train-detector options),
# DETECT_OPTIONS (extra detect options for every run, e.g. --device cpu), PRIOR_WEIGHTS (extra runs),
# PRIOR_OPTIONS (extra detect options of the network and w=X runs, e.g. "--child-hypotheses prior"),
# CHILD_THRESHOLDS (e.g. "0.01 0.005": one "ct=X" run per value, the network with --child-threshold X),
# REFINE_STEPS (e.g. "1 1.5": one "r=X" run per value, the network with --refine-step X at detect's default
# --refine-reach 2), VARIANTS (named
# runs of the network with extra detect options, ';'-separated NAME=OPTIONS, e.g. "both=--child-threshold
# 0.005 --refine-step 1;r1x1=--refine-step 1 --refine-reach 1"; NAME of letters, digits and . _ + -).
# Every run but "unrefined" refines centres (detect's default since 2026-11-24; docs/ACCURACY.md).
# Every run's table counts the found structures flagged lowConfidence (found below their threshold).
# NETWORK (e.g. "left_caudate=left_thalamus right_caudate=right_thalamus"): CHILD=PARENT arcs replacing the
# default parent (the root) of those children: a deeper network. SYNTH_SEEDS=distinct: every training
# image its own synthesis seed; SYNTH_OPTIONS: extra synthesize options of the training images
# (synthseg-common.sh). The network run is given --truth (the test label map):
# a last table gives, per structure, the stages' posteriors at the true pose (medians) and the position
# rank of its voxel, and every miss with them: a miss the classifiers cause (the truth scores low) or one
# the search causes (the truth scores high but ranks below the kept candidates).
set -euo pipefail
canopy=$1; out=$2; copies=${3:-3}; max_centre=${4:-6}; min_found=${5:-0.8}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${CANOPY_DATA_DIR:-$here/../../../shared/data}/synthseg-label-maps
if [ ! -f "$data/training_seg_01.nii.gz" ]; then
  echo "SKIP: $data not found (set CANOPY_DATA_DIR to the folder holding synthseg-label-maps)"; exit 77
fi
# Label values: synthseg-label-maps/labels.txt (FreeSurfer's).
read -r -a names <<<"${STRUCTURES:-brainstem left_thalamus right_thalamus left_caudate right_caudate left_putamen right_putamen left_hippocampus right_hippocampus left_lateral_ventricle right_lateral_ventricle}"
declare -A label=([brainstem]=16 [left_thalamus]=10 [right_thalamus]=49 [left_caudate]=11 [right_caudate]=50
  [left_putamen]=12 [right_putamen]=51 [left_hippocampus]=17 [right_hippocampus]=53
  [left_lateral_ventricle]=4 [right_lateral_ventricle]=43)
structures=()
for n in "${names[@]}"; do structures+=(--structure "$n=${label[$n]}"); done
rm -rf "$out"; mkdir -p "$out"
NETWORK=${NETWORK:-} python3 - "$out/net.json" "${names[@]}" <<'PY'
import json, os, sys
names = sys.argv[2:]
root = names[0]
parent = {n: root for n in names[1:]}
for arc in os.environ["NETWORK"].split():
    child, _, p = arc.partition("=")
    if child not in parent or p not in names or p == child:
        sys.exit(f"NETWORK: '{arc}' is not CHILD=PARENT of two structures in STRUCTURES (the root has no parent)")
    parent[child] = p
json.dump({"structures": [{"name": root}] + [{"name": n, "parent": parent[n]} for n in names[1:]]},
          open(sys.argv[1], "w"), indent=1)
print("network: " + ", ".join(f"{n} <- {parent[n]}" for n in names[1:]))
PY
read -r -a trainSubjects <<<"${TRAIN_SUBJECTS:-01 02 03 04 05 06 07 08 09 10}"
read -r -a testSubjects <<<"${TEST_SUBJECTS:-11 12 13 14 15}"
# shellcheck source=synthseg-common.sh
. "$here/synthseg-common.sh"
synthseg_training_set "$copies" "${trainSubjects[@]}"
start=$(date +%s)
# shellcheck disable=SC2086
"$canopy" train-detector --quiet "${train[@]}" "${structures[@]}" --network "$out/net.json" ${TRAIN_OPTIONS:-} \
  --out "$out/detector.json" --report "$out/train.json"
echo "training: $(($(date +%s) - start)) s"
modes=(network unrefined box independent)
declare -A variant=()
for w in ${PRIOR_WEIGHTS:-}; do modes+=("w=$w"); done
for t in ${CHILD_THRESHOLDS:-}; do modes+=("ct=$t"); variant["ct=$t"]="--child-threshold $t"; done
for r in ${REFINE_STEPS:-}; do modes+=("r=$r"); variant["r=$r"]="--refine-step $r"; done
IFS=';' read -r -a named <<<"${VARIANTS:-}"
for v in "${named[@]}"; do
  [ -z "${v// /}" ] && continue
  name=${v%%=*}; name=${name// /}
  if [[ $v != *=* || ! $name =~ ^[A-Za-z0-9_.+-]+$ ]]; then
    echo "VARIANTS: '$v' is not NAME=OPTIONS (NAME of letters, digits and . _ + -)" >&2; exit 2
  fi
  modes+=("v=$name"); variant["v=$name"]=${v#*=}
done
printf '%s\n' "${modes[@]}" >"$out/modes.txt"
for mode in "${modes[@]}"; do [ -n "${variant[$mode]:-}" ] && echo "$mode: network ${PRIOR_OPTIONS:-} ${variant[$mode]}"; done
for s in "${testSubjects[@]}"; do
  synthseg_test_volume "$s"
  for mode in "${modes[@]}"; do
    # shellcheck disable=SC2206
    case $mode in
      network) flag=(${PRIOR_OPTIONS:-} --truth "$out/test-labels$s.nii.gz") ;;
      unrefined) flag=(${PRIOR_OPTIONS:-} --refine-step 0) ;;
      box) flag=(--prior-weight 0 --child-hypotheses model) ;;
      independent) flag=(--ignore-network) ;;
      w=*) flag=(--prior-weight "${mode#w=}" ${PRIOR_OPTIONS:-}) ;;
      *) flag=(${PRIOR_OPTIONS:-} ${variant[$mode]}) ;;
    esac
    # shellcheck disable=SC2086
    "$canopy" detect --quiet --model "$out/detector.json" --input "$out/test$s.nii.gz" "${flag[@]}" ${DETECT_OPTIONS:-} \
      --output "$out/$mode-poses$s.json" --report "$out/$mode-detect$s.json" >"$out/$mode-detect$s.log"
    "$canopy" evaluate-poses --test "$out/$mode-poses$s.json" --reference "$out/test-labels$s.nii.gz" \
      "${structures[@]}" --json "$out/$mode-errors$s.json" >/dev/null
  done
done
python3 - "$out" "$max_centre" "$min_found" "${testSubjects[@]}" <<'PY'
import json, statistics, sys
out, max_centre, min_found, subjects = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
modes = open(f"{out}/modes.txt").read().split()
titles = {"network": "detect follows the network, children under their priors, centres refined (defaults)",
          "unrefined": "the network without centre refinement: --refine-step 0",
          "box": "the network's search box only: --prior-weight 0 --child-hypotheses model",
          "independent": "detect --ignore-network"}
def med(v):
    return statistics.median(v) if v else float("nan")
summary = {}
def title(mode):
    if mode in titles:
        return titles[mode]
    if mode.startswith("w="):
        return "--prior-weight " + mode[2:]
    if mode.startswith("ct="):
        return "network, --child-threshold " + mode[3:]
    if mode.startswith("r="):
        return "network, --refine-step " + mode[2:]
    return "network, variant " + mode[2:]
for mode in modes:
    rows = {}
    seconds = []
    for s in subjects:
        low = {p["name"]: p.get("lowConfidence", False) for p in json.load(open(f"{out}/{mode}-poses{s}.json"))["structures"]}
        for r in json.load(open(f"{out}/{mode}-errors{s}.json"))["structures"]:
            r["low"] = low.get(r["name"], False)
            rows.setdefault(r["name"], []).append(r)
        report = json.load(open(f"{out}/{mode}-detect{s}.json"))
        seconds.append(sum(st["seconds"] for st in report["stages"]))
        searched = {st["name"]: st["searched"] for st in report["stages"]}
        boxes = {st["name"]: st.get("searchBox") for st in report["stages"]}
    print(f"== {mode} ({title(mode)})")
    print(f"{'structure':26s} found  centre mm  worst axis deg  defined axes deg  worst size %  low confidence")
    allc, allo, alld, alls, missed, lows = [], [], [], [], 0, 0
    for name, rs in rows.items():
        found = [r for r in rs if r["found"]]
        missed += len(rs) - len(found)
        c = [r["centerErrorMm"] for r in found]; o = [r["orientationErrorDegrees"] for r in found]
        # Axes whose reference size is within 10% of another's are not defined by the shape (the brain
        # stem's short axes): evaluate-poses leaves them out of definedAxesErrorDegrees.
        d = [r["definedAxesErrorDegrees"] for r in found if r.get("definedAxesErrorDegrees") is not None]
        z = [r["worstSizeErrorPercent"] for r in found]
        allc += c; allo += o; alld += d; alls += z
        low = sum(1 for r in found if r["low"]); lows += low
        print(f"{name:26s} {len(found)}/{len(rs)}   {med(c):8.2f}   {med(o):13.1f}   {med(d):15.1f}   {med(z):11.1f}   {low}")
    total = sum(len(rs) for rs in rows.values())
    print(f"{'all (medians)':26s} {total - missed}/{total}   {med(allc):8.2f}   {med(allo):13.1f}   {med(alld):15.1f}   {med(alls):11.1f}   {lows}")
    print(f"detection time per subject (sum over structures, median): {med(seconds):.2f} s")
    if mode == "network":
        print("searched (last subject): " + "; ".join(
            f"{n}: {searched[n]}" + (f" ({boxes[n]['voxels']} of {boxes[n]['gridVoxels']} voxels)" if boxes[n] else "")
            for n in searched))
    summary[mode] = (missed, total, med(allc), med(allo), med(alls), lows, med(alld))
truth = {}
for s in subjects:
    for st in json.load(open(f"{out}/network-detect{s}.json"))["stages"]:
        t = st.get("truth")
        if t and not t.get("absent"):
            found = next(p["found"] for p in json.load(open(f"{out}/network-poses{s}.json"))["structures"] if p["name"] == st["name"])
            truth.setdefault(st["name"], []).append((s, found, t))
print("== network --truth: the stages' posteriors at the true pose (medians), position rank of its voxel among the searched (kept: the best %d)"
      % next(iter(truth.values()))[0][2]["candidatesKept"] if truth else "== network --truth: none")
print(f"{'structure':26s} position  orientation  scale  product  rank   searched")
for name, rows in truth.items():
    t = [r[2] for r in rows]
    print(f"{name:26s} {med([x['position'] for x in t]):8.3f}  {med([x['orientation'] for x in t]):11.3f}  "
          f"{med([x['scale'] for x in t]):5.3f}  {med([x['evidence'] for x in t]):7.4f}  {med([x['positionRank'] for x in t]):5.0f}  "
          f"{med([x['searchedVoxels'] for x in t]):8.0f}")
for name, rows in truth.items():
    for s, found, t in rows:
        if not found:
            print(f"missed {name} in {s}: truth position {t['position']:.3f} (rank {t['positionRank']} of {t['searchedVoxels']}), "
                  f"orientation {t['orientation']:.3f}, scale {t['scale']:.3f}, product {t['evidence']:.4f}")
print("== summary: mode, found, median centre mm, worst axis deg, defined axes deg, worst size %, found with low confidence")
for mode, (m, t, c, o, z, l, d) in summary.items():
    print(f"{mode:12s} {t - m}/{t}   {c:6.2f}   {o:6.1f}   {d:6.1f}   {z:6.1f}   {l}")
missed, total, centre = summary["network"][:3]
ok = total - missed >= min_found * total and centre <= max_centre
print(("ok  " if ok else "FAIL") + f" network: {total - missed} of {total} found (floor {min_found:.0%}), "
      f"median centre {centre:.2f} mm (floor {max_centre})")
sys.exit(0 if ok else 1)
PY
