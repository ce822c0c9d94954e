#!/usr/bin/env python3
"""segmentation_file_check.py CANOPY WORK_DIR: `canopy segment` and `canopy predict-forest` write 3D
Slicer segmentation files (.seg.nrrd) whose header carries the fields Slicer's
vtkMRMLSegmentationStorageNode reads (names, colours, label values, layers, extents) and whose voxels
are the label map's, on the input's grid. Standard library only (runs without the ctk-cli venv)."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import module_checks  # noqa: E402
import nrrd  # noqa: E402

canopy, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
c = module_checks.Checker(work)
p = c.path
c.phantom("phantom", (24, 22, 20), (12, 11, 10), (7, 6, 5), (1.5, 1.5, 1.5), (30.0, 25.0, -12.0))


def run(*args, status=0):
    done = subprocess.run([canopy, *args, "--quiet", "--device", "cpu"], capture_output=True, text=True)
    c.check(done.returncode == status, f"canopy {args[0]}: exit {done.returncode}, expected {status}: {done.stderr.strip()}")
    return done


run("train-pbt", "--image", p("phantom.nrrd"), "--label", p("phantom-label.nrrd"), "--out", p("pbt.json"),
    "--spacing", "3", "--box-mm", "12", "--features", "30", "--depth", "2", "--learners", "3",
    "--positives", "80", "--negatives", "80", "--lambda-grid", "0.5")
run("train-forest", "--image", p("phantom.nrrd"), "--label", p("phantom-label.nrrd"), "--out", p("forest.json"),
    "--trees", "4", "--depth", "8", "--features", "20", "--thresholds", "8", "--samples-per-image", "2000")

# segment: --output as .seg.nrrd (name from the model file) and --segmentation beside a .nrrd label map
run("segment", "--model", p("pbt.json"), "--input", p("phantom.nrrd"), "--output", p("labels.seg.nrrd"))
_, labels = c.same_grid("segment", p("labels.seg.nrrd"), p("phantom.nrrd"))
c.segmentation("segment --output .seg.nrrd", p("labels.seg.nrrd"), p("phantom.nrrd"), [(1, "pbt")], labels)
run("segment", "--model", p("pbt.json"), "--input", p("phantom.nrrd"), "--output", p("labels.nrrd"),
    "--segmentation", p("named.seg.nrrd"), "--segment-name", "left kidney", "--segment-color", "0.1,0.2,0.3")
_, labels = c.same_grid("segment", p("labels.nrrd"), p("phantom.nrrd"))
pairs = c.segmentation("segment --segmentation", p("named.seg.nrrd"), p("phantom.nrrd"), [(1, "left kidney")], labels)
if pairs:
    c.check(pairs.get("Segment0_Color") == "0.1 0.2 0.3", f"segment: Segment0_Color {pairs.get('Segment0_Color')!r}")

# predict-forest: one segment per class > 0, named
run("predict-forest", "--model", p("forest.json"), "--input", p("phantom.nrrd"), "--output", p("forest.nrrd"),
    "--segmentation", p("forest.seg.nrrd"), "--segment-names", "ellipsoid")
_, labels = c.same_grid("predict-forest", p("forest.nrrd"), p("phantom.nrrd"))
c.segmentation("predict-forest --segmentation", p("forest.seg.nrrd"), p("phantom.nrrd"), [(1, "ellipsoid")], labels)

# refusals, before any work and without output
done = run("segment", "--model", p("pbt.json"), "--input", p("phantom.nrrd"), "--output", p("never.nrrd"),
           "--segmentation", p("never.nrrd.gz"), status=1)
c.check("ends in .seg.nrrd" in done.stderr, f"segment: a --segmentation without .seg.nrrd gave {done.stderr.strip()!r}")
done = run("segment", "--model", p("pbt.json"), "--input", p("phantom.nrrd"), "--output", p("never.seg.nrrd"),
           "--segment-color", "1,2,3", status=1)
c.check("--segment-color" in done.stderr, f"segment: colour 1,2,3 gave {done.stderr.strip()!r}")
done = run("predict-forest", "--model", p("forest.json"), "--input", p("phantom.nrrd"), "--output", p("never.nrrd"),
           "--mode", "distribution", "--segmentation", p("never.seg.nrrd"), status=1)
c.check("argmax" in done.stderr, f"predict-forest: a distribution segmentation gave {done.stderr.strip()!r}")
done = run("predict-forest", "--model", p("forest.json"), "--input", p("phantom.nrrd"), "--output", p("never.nrrd"),
           "--segment-names", "a,b", status=1)
c.check("--segment-names" in done.stderr, f"predict-forest: two names for one class gave {done.stderr.strip()!r}")
left = [f for f in os.listdir(work) if f.startswith("never") or ".tmp-" in f]
c.check(not left, f"refused runs left files: {left}")

print(f"{len(c.failures)} failed" if c.failures else "segmentation files: all checks passed")
sys.exit(1 if c.failures else 0)
