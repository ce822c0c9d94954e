#!/usr/bin/env python3
"""Runs Canopy's Slicer CLI modules the way 3D Slicer does, without Slicer.

    slicer_module_driver.py MODULES_DIR CANOPY WORK_DIR

ctk-cli (PyPI; CTK's Python reader of Slicer Execution Model XML) reads each module's --xml; the
command line is built from the parameters as Slicer's CLI logic builds it (every option with a value
as --longflag value, booleans as a bare flag when true, files and images only when given, and
--returnparameterfile when the module has simple outputs). Inputs are temporary .nrrd files (a
phantom in LPS with flipped axes); tiny models are trained with the canopy command. Checked: exit
status, outputs on the input's grid, return parameters, <filter-start>/<filter-end> and
<filter-progress> values rising from 0 to 1, the .seg.nrrd segment fields, a bad input's one-line
error, and that a run killed with SIGKILL half-way (Slicer's Cancel) leaves no output.
Exit status: 0 passed, 1 failed, 77 skipped (no ctk-cli: scripts/slicer-test-venv could not install it).
"""
import logging
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

modules_dir, canopy, work = sys.argv[1], sys.argv[2], sys.argv[3]
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
