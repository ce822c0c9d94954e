#!/usr/bin/env python3
"""Runs Canopy's Slicer CLI modules the way 3D Slicer does, without Slicer.

    slicer_module_driver.py MODULES_DIR CANOPY POSE_PHANTOM_WRITER WORK_DIR

ctk-cli (PyPI; CTK's Python reader of Slicer Execution Model XML) reads each module's --xml; the
command line is built from the parameters as Slicer's CLI logic builds it (every option with a value
as --longflag value, booleans as a bare flag when true, files and images only when given, and
--returnparameterfile when the module has simple outputs). Inputs are temporary .nrrd files (a
phantom in LPS with flipped axes; for CanopyDetect and CanopySegmentShape the pose detector's synthesized
head phantoms, written by POSE_PHANTOM_WRITER); tiny models are trained with the canopy command. Checked: exit
status, outputs on the input's grid, return parameters, <filter-start>/<filter-end> and
<filter-progress> values rising from 0 to 1, the .seg.nrrd segment fields, a bad input's one-line
error, and that a run killed with SIGKILL half-way (Slicer's Cancel) leaves no output.
Exit status: 0 passed, 1 failed, 77 skipped (no ctk-cli: scripts/slicer-test-venv could not install it).
"""
import json
import logging
import math
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import module_checks  # noqa: E402
import nrrd  # noqa: E402

try:
    import ctk_cli
except ImportError:
    print("SKIP: ctk-cli is not installed in this Python (" + sys.executable + "); scripts/slicer-test-venv "
          "installs it from PyPI into build/venv-slicer, which needs the network once")
    sys.exit(77)

# Simple return parameters have no flag by design (Slicer reads them from --returnparameterfile);
# ctk-cli warns about every parameter without one. Its other warnings stay.
logging.basicConfig(format="ctk-cli: %(message)s")
logging.getLogger("ctk_cli.module").addFilter(lambda record: "cannot be passed" not in record.getMessage())

modules_dir, canopy, pose_phantom_writer, work = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
checker = module_checks.Checker(work)
check, path, failures = checker.check, checker.path, checker.failures


def phantom(*args):
    return checker.phantom(*args)


def check_same_grid(name, output, reference=None):
    return checker.same_grid(name, output, reference or path("phantom.nrrd"))


def check_segmentation(name, seg_path, segments, label_voxels):
    return checker.segmentation(name, seg_path, path("phantom.nrrd"), segments, label_voxels)


truth = phantom("phantom", (24, 22, 20), (12, 11, 10), (7, 6, 5), (1.5, 1.5, 1.5), (30.0, 25.0, -12.0))


def canopy_run(*args):
    subprocess.run([canopy, *args, "--quiet", "--device", "cpu"], check=True, stdout=subprocess.DEVNULL)


canopy_run("train-pbt", "--image", path("phantom.nrrd"), "--label", path("phantom-label.nrrd"), "--out",
           path("pbt.json"), "--spacing", "3", "--box-mm", "12", "--features", "30", "--depth", "2", "--learners",
           "3", "--positives", "80", "--negatives", "80", "--lambda-grid", "0.5")
canopy_run("train-forest", "--image", path("phantom.nrrd"), "--label", path("phantom-label.nrrd"), "--out",
           path("forest.json"), "--trees", "4", "--depth", "8", "--features", "20", "--thresholds", "8",
           "--samples-per-image", "2000")


# --- Slicer's way of calling a module
def slicer_command(executable, module, values, return_file):
    """The argument list Slicer builds from the module's parameters and the values set in its GUI."""
    arguments, options, outputs = module.classifyParameters()
    command = [executable]
    for p in options:
        flag = "--" + (p.longflag or "").lstrip("-") if p.longflag else "-" + p.flag.lstrip("-")
        value = values.get(p.identifier(), p.default)
        if p.typ == "boolean":
            if str(value).lower() == "true":
                command.append(flag)
            continue
        if p.isExternalType() and p.identifier() not in values:
            continue  # no node or file chosen: Slicer leaves the parameter out
        if value is None or value == "":
            continue
        command += [flag, str(value)]
    if outputs:
        command += ["--returnparameterfile", return_file]
    command += [str(values[p.identifier()]) for p in arguments]
    return command


def run_module(name, values, expect_status=0):
    """Runs the module as Slicer would; returns (status, stdout lines, stderr, return values)."""
    executable = os.path.join(modules_dir, name)
    module = ctk_cli.CLIModule(executable)
    check(module.category == "Segmentation.Canopy", f"{name}: category {module.category}")
    return_file = path(name + ".returns.txt")
    if os.path.exists(return_file):
        os.remove(return_file)
    command = slicer_command(executable, module, values, return_file)
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    lines = done.stdout.splitlines()
    returns = {}
    if os.path.exists(return_file):
        for line in open(return_file):
            key, _, value = line.partition(" = ")
            returns[key.strip()] = value.rstrip("\n")
    if done.returncode != expect_status:
        check(False, f"{name}: exit status {done.returncode}, expected {expect_status}; stderr: {done.stderr.strip()}")
    if expect_status == 0:
        check_protocol(name, lines)
        declared = {p.identifier(): p for p in module.classifyParameters()[2]}
        check(set(returns) == set(declared), f"{name}: return parameters {sorted(returns)} != declared {sorted(declared)}")
        for key, value in returns.items():
            if key in declared:
                try:
                    returns[key] = declared[key].parseValue(value)
                except ValueError:
                    check(False, f"{name}: return parameter {key} = {value!r} does not parse as {declared[key].typ}")
    return done.returncode, lines, done.stderr, returns


def progress_values(lines):
    return [float(line[len("<filter-progress>"):-len("</filter-progress>")])
            for line in lines if line.startswith("<filter-progress>") and line.endswith("</filter-progress>")]


def check_protocol(name, lines):
    values = progress_values(lines)
    check(len(values) >= 3, f"{name}: only {len(values)} <filter-progress> lines")
    if values:
        check(values[0] == 0.0, f"{name}: progress starts at {values[0]}, not 0")
        check(values[-1] == 1.0, f"{name}: progress ends at {values[-1]}, not 1")
        check(all(b >= a for a, b in zip(values, values[1:])), f"{name}: progress goes back: {values}")
        check(all(0.0 <= v <= 1.0 for v in values), f"{name}: progress outside [0, 1]: {values}")
    start = lines.index("<filter-start>") if "<filter-start>" in lines else -1
    end = lines.index("<filter-end>") if "<filter-end>" in lines else -1
    first = next((i for i, line in enumerate(lines) if line.startswith("<filter-progress>")), -1)
    check(0 <= start < first < end, f"{name}: <filter-start> {start}, first progress {first}, <filter-end> {end} out of order")


# --- CanopySegment
out = {k: path("segment" + k) for k in ("-label.nrrd", ".seg.nrrd", "-model.vtp", "-probability.nrrd")}
status, lines, _, returns = run_module("CanopySegment", {
    "inputVolume": path("phantom.nrrd"), "model": path("pbt.json"), "outputLabel": out["-label.nrrd"],
    "outputSegmentation": out[".seg.nrrd"], "outputModel": out["-model.vtp"], "outputProbability": out["-probability.nrrd"],
    "segmentName": "ellipsoid", "segmentColor": "0.2,0.6,0.9", "device": "cpu"})
if status == 0:
    for key, file in out.items():
        check(os.path.exists(file) and os.path.getsize(file) > 0, f"CanopySegment: {key} output missing or empty")
    fields, labels = check_same_grid("CanopySegment", out["-label.nrrd"])
    labelled = sum(1 for v in labels if v == 1)
    check(returns.get("labelledVoxels") == labelled, f"CanopySegment: labelledVoxels {returns.get('labelledVoxels')} != {labelled} in the label volume")
    score = module_checks.dice(labels, path("phantom-label.nrrd"))
    check(score > 0.7, f"CanopySegment: Dice {score:.3f} against the phantom's ellipsoid ({labelled} voxels, it has {truth:.0f})")
    check(abs(returns.get("labelledVolumeMm3", 0) - labelled * 1.5 ** 3) < 1e-3 * labelled + 1e-6, "CanopySegment: labelledVolumeMm3")
    check(returns.get("lambdaUsed") == 0.5 and returns.get("lambdaSource") == "model",
          f"CanopySegment: lambda {returns.get('lambdaUsed')} from {returns.get('lambdaSource')}, the model's is 0.5")
    check(returns.get("deviceUsed", "").lower().startswith("cpu"), f"CanopySegment: deviceUsed {returns.get('deviceUsed')!r}")
    check_segmentation("CanopySegment", out[".seg.nrrd"], [(1, "ellipsoid")], labels)
    check(open(out["-model.vtp"], "rb").read(5) == b"<?xml", "CanopySegment: the model is not a .vtp (VTK XML)")
    check_same_grid("CanopySegment", out["-probability.nrrd"])

# overriding lambda from the GUI, 26-neighbourhood, a label volume that is itself a .seg.nrrd
status, _, _, returns = run_module("CanopySegment", {
    "inputVolume": path("phantom.nrrd"), "model": path("pbt.json"), "outputLabel": path("override.seg.nrrd"),
    "overrideLambda": "true", "lambda": 2.0, "neighborhood": "26", "device": "cpu"})
if status == 0:
    check(returns.get("lambdaUsed") == 2.0 and returns.get("lambdaSource") == "--lambda",
          f"CanopySegment: overridden lambda {returns.get('lambdaUsed')} from {returns.get('lambdaSource')}")
    _, pairs, _ = nrrd.read(path("override.seg.nrrd"))
    check(pairs.get("Segment0_Name") == "pbt", f"CanopySegment: default segment name {pairs.get('Segment0_Name')!r}, not the model's file name")

# --- CanopyClassify
status, _, _, returns = run_module("CanopyClassify", {
    "inputVolume": path("phantom.nrrd"), "model": path("pbt.json"), "outputProbability": path("classify.nrrd")})
if status == 0:
    fields, p = check_same_grid("CanopyClassify", path("classify.nrrd"))
    check(fields["type"] == "float", f"CanopyClassify: probability type {fields['type']}")
    check(abs(returns.get("maximumProbability", -1) - max(p)) < 1e-4, f"CanopyClassify: maximumProbability {returns.get('maximumProbability')} != {max(p)}")
    check(returns.get("voxelsAtLeastHalf") == sum(1 for v in p if v >= 0.5), "CanopyClassify: voxelsAtLeastHalf")

# --- CanopyForestPredict
status, _, _, returns = run_module("CanopyForestPredict", {
    "inputVolume": path("phantom.nrrd"), "model": path("forest.json"), "outputLabel": path("forest-label.nrrd"),
    "outputSegmentation": path("forest.seg.nrrd"), "segmentNames": "ellipsoid"})
if status == 0:
    _, labels = check_same_grid("CanopyForestPredict", path("forest-label.nrrd"))
    check(returns.get("classes") == 2, f"CanopyForestPredict: classes {returns.get('classes')}")
    score = module_checks.dice(labels, path("phantom-label.nrrd"))
    check(score > 0.7, f"CanopyForestPredict: class 1 Dice {score:.3f} against the phantom's ellipsoid")
    check_segmentation("CanopyForestPredict", path("forest.seg.nrrd"), [(1, "ellipsoid")], labels)
    # an operating point: the labels of `canopy predict-forest --threshold`, fewer foreground voxels than argmax
    status, _, _, _ = run_module("CanopyForestPredict", {
        "inputVolume": path("phantom.nrrd"), "model": path("forest.json"),
        "outputLabel": path("forest-label-t.nrrd"), "foregroundThreshold": 0.95})
    if status == 0:
        canopy_run("predict-forest", "--model", path("forest.json"), "--input", path("phantom.nrrd"),
                   "--output", path("forest-label-cli-t.nrrd"), "--threshold", "0.95", "--quiet")
        _, at_threshold = check_same_grid("CanopyForestPredict", path("forest-label-t.nrrd"))
        from_cli = nrrd.read(path("forest-label-cli-t.nrrd"))[2]
        check(list(at_threshold) == list(from_cli),
              "CanopyForestPredict: foregroundThreshold 0.95 labels differ from predict-forest --threshold 0.95")
        check(sum(1 for v in at_threshold if v) < sum(1 for v in labels if v),
              "CanopyForestPredict: foregroundThreshold 0.95 labels no fewer voxels than the most probable class")
    # the same model as CBOR (a .cbor file, which the module's file dialog offers): the same labels
    subprocess.run([canopy, "convert-model", "--model", path("forest.json"), "--out", path("forest.cbor"), "--quiet"],
                   check=True)
    status, _, _, _ = run_module("CanopyForestPredict", {
        "inputVolume": path("phantom.nrrd"), "model": path("forest.cbor"), "outputLabel": path("forest-label-cbor.nrrd")})
    if status == 0:
        _, from_cbor = check_same_grid("CanopyForestPredict", path("forest-label-cbor.nrrd"))
        check(list(from_cbor) == list(labels), "CanopyForestPredict: the CBOR model labels differ from its JSON's")

# --- CanopyDetect and CanopySegmentShape: a detector and a shape model of structure "large" (label 2)
# trained on 10 synthesized heads, run on a held-out one
subprocess.run([pose_phantom_writer, work, "1", "10"], check=True)
subprocess.run([pose_phantom_writer, work, "102", "1"], check=True)
pairs = []
for seed in range(1, 11):
    pairs += ["--image", path(f"pose-{seed}.nrrd"), "--label", path(f"pose-{seed}-label.nrrd")]
canopy_run("train-detector", *pairs, "--structure", "large=2", "--threads", "2", "--out", path("detector.json"))
canopy_run("train-shape", "--boundary", *pairs, "--structure", "large=2", "--levels", "150,300", "--passes", "1",
           "--threads", "2", "--boundary-search", "6,3", "--boundary-scale", "2,1", "--boundary-vertices", "120",
           "--boundary-features", "500", "--boundary-depth", "3", "--out", path("shape.json"))
held_out, held_out_labels = path("pose-102.nrrd"), path("pose-102-label.nrrd")
truth_centre = module_checks.label_centre_lps(held_out_labels, 2)

detect_out = {k: path("detect" + k) for k in ("-centres.mrk.json", "-boxes.vtp", "-all.mrk.json", "-poses.json")}
status, _, _, returns = run_module("CanopyDetect", {
    "inputVolume": held_out, "detector": path("detector.json"), "outputCentres": detect_out["-centres.mrk.json"],
    "outputBoxes": detect_out["-boxes.vtp"], "outputMarkups": detect_out["-all.mrk.json"],
    "outputPoses": detect_out["-poses.json"], "device": "cpu"})
if status == 0:
    check(returns.get("structuresFound") == 1 and returns.get("found") == "large" and returns.get("missing") == ""
          and returns.get("structuresMissing") == 0, f"CanopyDetect: returned {returns}")
    check(returns.get("deviceUsed", "").lower().startswith("cpu"), f"CanopyDetect: deviceUsed {returns.get('deviceUsed')!r}")
    centres = json.load(open(detect_out["-centres.mrk.json"]))
    markups = centres.get("markups", [])
    check(len(markups) == 1 and markups[0].get("type") == "Fiducial" and markups[0].get("coordinateSystem") == "LPS",
          "CanopyDetect: the centres file is not one LPS point list")
    points = markups[0].get("controlPoints", []) if markups else []
    if check(len(points) == 1 and points[0].get("label") == "large", f"CanopyDetect: centres {points}"):
        error = math.dist(points[0]["position"], truth_centre)
        check(error < 6.0, f"CanopyDetect: centre {points[0]['position']} is {error:.1f} mm from the truth {truth_centre}")
    everything = json.load(open(detect_out["-all.mrk.json"])).get("markups", [])
    check([m.get("type") for m in everything] == ["Fiducial", "ROI"], f"CanopyDetect: markups file holds {[m.get('type') for m in everything]}")
    check(open(detect_out["-boxes.vtp"], "rb").read(5) == b"<?xml", "CanopyDetect: the boxes are not a .vtp (VTK XML)")
    poses = json.load(open(detect_out["-poses.json"])).get("structures", [])
    check(len(poses) == 1 and poses[0].get("name") == "large" and poses[0].get("found") is True, f"CanopyDetect: poses {poses}")

# from CanopyDetect's poses file, then fully automatic from the detector: the same fit
shape_runs = {"poses": {"poses": detect_out["-poses.json"]}, "detector": {"detector": path("detector.json")}}
for start, values in shape_runs.items():
    label_out, model_out = path(f"shape-{start}-label.nrrd"), path(f"shape-{start}.vtp")
    status, _, _, returns = run_module("CanopySegmentShape", {
        "inputVolume": held_out, "shapeModel": path("shape.json"), "outputLabel": label_out, "outputModel": model_out,
        "device": "cpu", **values})
    if status != 0:
        continue
    _, labels = check_same_grid("CanopySegmentShape", label_out, held_out)
    score = module_checks.dice(labels, held_out_labels, value=2, reference_value=2)
    check(score > 0.8, f"CanopySegmentShape ({start}): Dice {score:.3f} against the held-out structure")
    check(returns.get("structureSegmented") == "large", f"CanopySegmentShape: structure {returns.get('structureSegmented')!r}")
    check(returns.get("labelledVoxels") == sum(1 for v in labels if v == 2), "CanopySegmentShape: labelledVoxels")
    check(abs(returns.get("labelledVolumeMm3", 0) - returns.get("labelledVoxels", 0) * 1.5 ** 3) < 1e-3,
          "CanopySegmentShape: labelledVolumeMm3")
    check(returns.get("fitSuspect") is False and returns.get("suspectReasons") == "",
          f"CanopySegmentShape ({start}): a good fit flagged suspect: {returns.get('suspectReasons')!r}")
    check(0.0 < returns.get("shapeDistance", -1) < returns.get("shapeDistanceLimit", 0),
          f"CanopySegmentShape: shape distance {returns.get('shapeDistance')} against {returns.get('shapeDistanceLimit')}")
    check(0.0 < returns.get("surfaceScore", -1) <= 1.0, f"CanopySegmentShape: surfaceScore {returns.get('surfaceScore')}")
    check(0.0 < returns.get("detectionScore", -1) <= 1.0, f"CanopySegmentShape ({start}): detectionScore {returns.get('detectionScore')}")
    check(open(model_out, "rb").read(5) == b"<?xml", "CanopySegmentShape: the model is not a .vtp (VTK XML)")
# no initial pose chosen: one error line, no output
status, _, stderr, _ = run_module("CanopySegmentShape", {
    "inputVolume": held_out, "shapeModel": path("shape.json"), "outputLabel": path("never-shape.nrrd")}, expect_status=1)
check("give exactly one of" in stderr and not os.path.exists(path("never-shape.nrrd")),
      f"CanopySegmentShape: no initial pose gave {stderr.strip()!r}")

# --- CanopyScribbleSegment: strokes on the phantom (2: lines inside the ellipsoid, 1: a loop about a voxel
# outside its edge), then a second round of strokes on other slices through the saved classifier
def scribbles(name, slices):
    size, centre, radii = (24, 22, 20), (12, 11, 10), (7, 6, 5)
    values = []
    for z in range(size[2]):
        for y in range(size[1]):
            for x in range(size[0]):
                r = sum(((c - m) / q) ** 2 for c, m, q in zip((x, y, z), centre, radii)) ** 0.5
                line = z in slices and (y == centre[1] or x == centre[0])
                loop = z in slices and 1.15 <= r <= 1.5
                values.append(2.0 if line and r <= 0.7 else 1.0 if loop else 0.0)
    nrrd.write(path(name), size, values, (1.5, 1.5, 1.5), (30.0, 25.0, -12.0))
    return sum(1 for v in values if v)


first_strokes, second_strokes = scribbles("scribbles-1.nrrd", (5, 10, 15)), scribbles("scribbles-2.nrrd", (7, 12))
rounds = [("scribbles-1.nrrd", {}, first_strokes), ("scribbles-2.nrrd", {"inputModel": path("scribble-1.json")}, second_strokes)]
learnt_before = 0
for k, (strokes, more, painted) in enumerate(rounds, 1):
    status, _, _, returns = run_module("CanopyScribbleSegment", {
        "inputVolume": path("phantom.nrrd"), "scribbles": path(strokes), "outputProbability": path(f"scribble-{k}-p.nrrd"),
        "outputLabel": path(f"scribble-{k}-label.nrrd"), "outputModel": path(f"scribble-{k}.json"), **more})
    if status != 0:
        break
    fields, p = check_same_grid("CanopyScribbleSegment", path(f"scribble-{k}-p.nrrd"))
    check(fields["type"] == "float" and all(0.0 <= v <= 1.0 for v in p), f"CanopyScribbleSegment: round {k} probabilities")
    _, labels = check_same_grid("CanopyScribbleSegment", path(f"scribble-{k}-label.nrrd"))
    score = module_checks.dice(labels, path("phantom-label.nrrd"), value=2, reference_value=1)
    check(score > 0.85, f"CanopyScribbleSegment: round {k} Dice {score:.3f} against the phantom's ellipsoid")
    check(returns.get("labels") == "1,2", f"CanopyScribbleSegment: labels {returns.get('labels')!r}")
    check(returns.get("voxelsLearnt") == painted, f"CanopyScribbleSegment: round {k} learnt {returns.get('voxelsLearnt')} voxels, {painted} painted")
    check(returns.get("instancesLearnt", 0) > learnt_before, f"CanopyScribbleSegment: round {k} instances {returns.get('instancesLearnt')}")
    learnt_before = returns.get("instancesLearnt", 0)
    check(os.path.getsize(path(f"scribble-{k}.json")) > 0, f"CanopyScribbleSegment: round {k} saved no classifier")

# --- a bad input: one error line naming the parameter, exit status 1..127, no output
status, _, stderr, _ = run_module("CanopySegment", {
    "inputVolume": path("phantom.nrrd"), "model": path("missing.json"), "outputLabel": path("never.nrrd")}, expect_status=1)
errors = [line for line in stderr.splitlines() if "error" in line]
check(len(errors) == 1 and "missing.json" in errors[0], f"CanopySegment: bad model gave {stderr.strip()!r}")
check(not os.path.exists(path("never.nrrd")), "CanopySegment: a failed run left its output")
status, _, stderr, _ = run_module("CanopySegment", {
    "inputVolume": path("phantom.nrrd"), "model": path("pbt.json"), "outputLabel": path("never.nrrd"),
    "lambda": 500}, expect_status=105)
check("lambda" in stderr, f"CanopySegment: lambda 500 (above the XML maximum) gave {stderr.strip()!r}")


# --- Cancel: SIGKILL half-way leaves no output (Slicer's Cancel kills the process)
big = phantom("big", (150, 150, 150), (75, 75, 75), (50, 40, 30), (1.0, 1.0, 1.0), (0.0, 0.0, 0.0))
canopy_run("train-pbt", "--image", path("phantom.nrrd"), "--label", path("phantom-label.nrrd"), "--out",
           path("pbt-fine.json"), "--spacing", "1", "--box-mm", "6", "--features", "30", "--depth", "3",
           "--learners", "4", "--positives", "80", "--negatives", "80", "--lambda-grid", "1")
killed_outputs = [path("killed-label.nrrd"), path("killed.seg.nrrd"), path("killed-probability.nrrd"), path("killed.vtp")]
executable = os.path.join(modules_dir, "CanopySegment")
module = ctk_cli.CLIModule(executable)
command = slicer_command(executable, module, {
    "inputVolume": path("big.nrrd"), "model": path("pbt-fine.json"), "outputLabel": killed_outputs[0],
    "outputSegmentation": killed_outputs[1], "outputProbability": killed_outputs[2], "outputModel": killed_outputs[3],
    "device": "cpu"}, path("killed.returns.txt"))
process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
seen, killed_at = [], None
for line in process.stdout:
    seen += progress_values([line.strip()])
    if seen and 0.0 < seen[-1] < 1.0:
        killed_at = seen[-1]
        os.kill(process.pid, signal.SIGKILL)
        break
process.wait()
if check(killed_at is not None, f"cancel: the run ended before it could be killed half-way (progress {seen})"):
    check(process.returncode == -signal.SIGKILL, f"cancel: exit {process.returncode}, not killed")
    left = [p for p in killed_outputs + [path("killed.returns.txt")] if os.path.exists(p)]
    check(not left, f"cancel: killed at progress {killed_at}, these outputs exist: {left}")
    print(f"cancel: killed at progress {killed_at}; no output exists")

print(f"{len(failures)} failed" if failures else "all Slicer module checks passed")
sys.exit(1 if failures else 0)
