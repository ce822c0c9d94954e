#!/usr/bin/env python3
"""bad-input-fixtures.py CANOPY DIR: the inputs of the bad-model/output/option sweep
(bad-models-and-outputs.table). Writes a small phantom volume and its label map, trains a tiny PBT and
a tiny forest on them with CANOPY, and derives broken model files from those valid ones. Standard
library only; deterministic; about two seconds."""
import json
import os
import shutil
import struct
import subprocess
import sys

canopy, out = sys.argv[1], sys.argv[2]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
os.makedirs(os.path.join(out, "outputs"))  # a folder: "--output is a folder" rows point here
os.makedirs(os.path.join(out, "out"))  # where rows would write ($O): nothing may appear there


def path(name):
    return os.path.join(out, name)


def write_nrrd(name, size, values, spacing=(1.5, 1.5, 1.5)):
    with open(path(name), "wb") as f:
        f.write(("NRRD0004\ntype: float\ndimension: 3\nsizes: %d %d %d\n" % size).encode())
        f.write(("spacings: %g %g %g\nendian: little\nencoding: raw\n\n" % spacing).encode())
        f.write(struct.pack("<%df" % len(values), *values))


# An ellipsoid of intensity 100 on 20 with a deterministic ripple; the label is the ellipsoid.
size = (20, 18, 16)
image, label = [], []
for z in range(size[2]):
    for y in range(size[1]):
        for x in range(size[0]):
            inside = ((x - 10) / 6.0) ** 2 + ((y - 9) / 5.0) ** 2 + ((z - 8) / 4.0) ** 2 <= 1.0
            image.append((100.0 if inside else 20.0) + ((x * 7 + y * 13 + z * 5) % 11) - 5)
            label.append(1.0 if inside else 0.0)
write_nrrd("phantom.nrrd", size, image)
write_nrrd("label.nrrd", size, label)
# Copies that "output == input" rows name as both input and output (each row its own, so a
# failing row cannot spoil the fixture of another).
for copy in ("same-classify", "same-segment", "same-predict", "same-augment", "same-mesh-label"):
    shutil.copy(path("phantom.nrrd" if copy != "same-mesh-label" else "label.nrrd"), path(copy + ".nrrd"))
with open(path("dataset.json"), "w") as f:
    json.dump({"training": [{"image": "phantom.nrrd", "label": "label.nrrd"}] * 3}, f)

# An unwritable folder. Root may write anywhere a mode allows, so as root it is /proc.
if os.geteuid() == 0:
    os.symlink("/proc", path("unwritable"))
else:
    os.makedirs(path("unwritable"))
    os.chmod(path("unwritable"), 0o555)


def run(*args):
    subprocess.run([canopy, *args, "--quiet"], check=True, stdout=subprocess.DEVNULL)


run("train-pbt", "--image", path("phantom.nrrd"), "--label", path("label.nrrd"), "--out", path("pbt.json"),
    "--spacing", "3", "--box-mm", "12", "--features", "30", "--depth", "2", "--learners", "3",
    "--positives", "80", "--negatives", "80", "--device", "cpu")
run("train-forest", "--image", path("phantom.nrrd"), "--label", path("label.nrrd"), "--out", path("forest.json"),
    "--trees", "2", "--depth", "4", "--features", "8", "--thresholds", "4", "--samples-per-image", "300",
    "--device", "cpu")
run("train-forest", "--image", path("phantom.nrrd"), "--label", path("label.nrrd"), "--image", path("phantom.nrrd"),
    "--label", path("label.nrrd"), "--out", path("cascade.json"), "--auto-context", "2", "--context-folds", "2",
    "--trees", "1", "--depth", "3", "--features", "8", "--thresholds", "4", "--samples-per-image", "300",
    "--device", "cpu")
for model in ("pbt", "forest"):
    shutil.copy(path(model + ".json"), path("same-" + model + ".json"))
# The forest as CBOR (a ".cbor" model), and CBOR damaged: cut short, and with bytes after its value.
run("convert-model", "--model", path("forest.json"), "--out", path("forest.cbor"))
with open(path("forest.cbor"), "rb") as f:
    cbor = f.read()
with open(path("forest-truncated.cbor"), "wb") as f:
    f.write(cbor[: len(cbor) // 2])
with open(path("forest-trailing.cbor"), "wb") as f:
    f.write(cbor + b"\x00")

pbt = json.load(open(path("pbt.json")))
forest = json.load(open(path("forest.json")))
cascade = json.load(open(path("cascade.json")))


def broken(name, base, change):
    doc = json.loads(json.dumps(base))
    change(doc)
    with open(path(name), "w") as f:
        json.dump(doc, f)


def setter(*keys_and_value):
    *keys, value = keys_and_value

    def change(doc):
        for k in keys[:-1]:
            doc = doc[k]
        doc[keys[-1]] = value
    return change


# Files that are no model at all.
open(path("empty.json"), "w").close()
with open(path("garbage.json"), "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n\x00\x00garbage\xff\xfe")
text = open(path("pbt.json")).read()
open(path("pbt-truncated.json"), "w").write(text[: len(text) // 2])
text = open(path("forest.json")).read()
open(path("forest-truncated.json"), "w").write(text[: len(text) // 2])
depth = 1000000  # the old reader copied "training" recursively: SIGSEGV at this depth (not at 100,000)
open(path("deep-array.json"), "w").write("[" * depth + "]" * depth)
with open(path("pbt-deep-training.json"), "w") as f:  # a valid model whose "training" value nests deep
    f.write(json.dumps({**pbt, "training": "@deep@"}).replace('"@deep@"', "[" * depth + "]" * depth))
open(path("pbt-unclosed-deep.json"), "w").write('{"format": "canopy-model", "training": ' + "[" * depth)

# PBT models: versions, structure, indices, numbers, sizes.
broken("pbt-version-99.json", pbt, setter("version", 99))
broken("pbt-version-0.json", pbt, setter("version", 0))
broken("pbt-version-string.json", pbt, setter("version", "1"))
broken("pbt-kind-forest.json", pbt, setter("kind", "forest"))
broken("pbt-kind-number.json", pbt, setter("kind", 5))
broken("pbt-normalization-method-array.json", pbt, setter("normalization", "method", []))
nodes = len(pbt["pbt"]["nodes"])
assert nodes >= 3, "the tiny PBT needs an inner node with two children"


def cyclic(doc):
    n = doc["pbt"]["nodes"]
    n[n[0]["left"]]["left"] = n[0]["right"]  # the right child gets a second parent: a cycle in the DAG sense
    n[n[0]["right"]]["left"] = n[0]["left"]
broken("pbt-cyclic.json", pbt, cyclic)
broken("pbt-self-child.json", pbt, lambda d: d["pbt"]["nodes"][1].update(left=1))
broken("pbt-child-out-of-range.json", pbt, lambda d: d["pbt"]["nodes"][0].update(left=10 ** 6))
broken("pbt-child-huge.json", pbt, lambda d: d["pbt"]["nodes"][0].update(left=10 ** 12))
broken("pbt-learner-out-of-range.json", pbt, lambda d: d["pbt"]["nodes"][0].update(firstLearner=10 ** 6))
broken("pbt-learner-count-negative.json", pbt, lambda d: d["pbt"]["nodes"][0].update(numLearners=-1))
broken("pbt-feature-out-of-range.json", pbt, lambda d: d["pbt"]["learners"][0].update(feature=10 ** 6))
broken("pbt-feature-negative.json", pbt, lambda d: d["pbt"]["learners"][0].update(feature=-1))
broken("pbt-bins-huge.json", pbt, lambda d: d["pbt"]["learners"][0].update(numBins=10 ** 12))
broken("pbt-table-offset-huge.json", pbt, lambda d: d["pbt"]["learners"][0].update(tableOffset=2 ** 31 - 1))
broken("pbt-bin-width-overflow.json", pbt, lambda d: d["pbt"]["learners"][0].update(invBinWidth=1e39))
broken("pbt-table-value-overflow.json", pbt, lambda d: d["pbt"]["tables"].__setitem__(0, 1e300))
broken("pbt-calibration-null.json", pbt, lambda d: d["pbt"]["nodes"][0].update(calibrationScale=None))
broken("pbt-epsilon-negative.json", pbt, setter("pbt", "epsilon1", -0.1))
broken("pbt-no-nodes.json", pbt, setter("pbt", "nodes", []))
broken("pbt-sample-box-huge.json", pbt, setter("pbt", "sampleBox", [10 ** 6, 10 ** 6, 10 ** 6]))
broken("pbt-sample-box-max.json", pbt, setter("pbt", "sampleBox", [4096, 4096, 4096]))
broken("pbt-feature-box-far.json", pbt,
       lambda d: d["pbt"]["features"][0]["cuboids"][0].update(lo=[-1e30, -1e30, -1e30], hi=[1e30, 1e30, 1e30]))
broken("pbt-feature-box-outside.json", pbt,
       lambda d: d["pbt"]["features"][0]["cuboids"][0].update(lo=[1e6, 1e6, 1e6], hi=[2e6, 2e6, 2e6]))
broken("pbt-cuboids-many.json", pbt,
       lambda d: d["pbt"]["features"][0].update(cuboids=d["pbt"]["features"][0]["cuboids"] * 5))
broken("pbt-spacing-tiny.json", pbt, setter("workingSpacing", [1e-6, 1e-6, 1e-6]))
broken("pbt-spacing-huge.json", pbt, setter("workingSpacing", [1e9, 1e9, 1e9]))
broken("pbt-spacing-nan.json", pbt, setter("workingSpacing", [None, 2, 2]))
broken("pbt-normalization-unknown.json", pbt, setter("normalization", "method", "zscore"))
broken("pbt-window-inverted.json", pbt,
       setter("normalization", {"method": "window", "windowLow": 300, "windowHigh": -200}))
broken("pbt-percentile-inverted.json", pbt,
       setter("normalization", {"method": "percentile", "lowPercentile": 99, "highPercentile": 1}))

# Forest models.
broken("forest-version-99.json", forest, setter("version", 99))
broken("cascade-version-99.json", cascade, setter("version", 99))
broken("cascade-stage-channels.json", cascade, lambda d: d["stages"][1].update(channels=9))
broken("cascade-no-stages.json", cascade, setter("stages", []))
broken("forest-version-0.json", forest, setter("version", 0))
broken("forest-format-pbt.json", forest, setter("format", "canopy-model"))
inner = next(i for i, n in enumerate(forest["trees"][0]["nodes"]) if isinstance(n, list))


def node(change):
    def apply(doc):
        row = doc["trees"][0]["nodes"][inner]
        change(row)
    return apply
broken("forest-child-out-of-range.json", forest, node(lambda r: r.__setitem__(0, 10 ** 6)))
broken("forest-child-huge.json", forest, node(lambda r: r.__setitem__(0, 10 ** 12)))
broken("forest-child-backwards.json", forest, node(lambda r: r.__setitem__(0, 0)))
broken("forest-channel-out-of-range.json", forest, node(lambda r: r.__setitem__(3, 7)))
broken("forest-channel-huge.json", forest, node(lambda r: r.__setitem__(3, 10 ** 9)))
broken("forest-offset-huge.json", forest, node(lambda r: r.__setitem__(4, 10 ** 7)))
broken("forest-box-zero.json", forest, node(lambda r: r.__setitem__(7, 0)))
broken("forest-threshold-overflow.json", forest, node(lambda r: r.__setitem__(1, 1e39)))
broken("forest-threshold-string.json", forest, node(lambda r: r.__setitem__(1, "NaN")))
broken("forest-leaf-out-of-range.json", forest,
       lambda d: d["trees"][0]["nodes"].__setitem__(-1, {"leaf": 10 ** 6}))
broken("forest-classes-huge.json", forest, setter("classes", 10 ** 12))
broken("forest-classes-mismatch.json", forest, setter("classes", 7))
broken("forest-trees-empty.json", forest, setter("trees", []))
broken("forest-trees-many.json", forest, lambda d: d.update(trees=d["trees"] * 1000))
broken("forest-distribution-negative.json", forest, lambda d: d["distributions"].__setitem__(0, -1))
broken("forest-channels-three.json", forest, setter("channels", 3))
broken("forest-dimension-2.json", forest, setter("dimension", 2))
broken("forest-filter-bank-unknown.json", forest, setter("filterBank", ["blur:2"]))
print("fixtures in", out)
