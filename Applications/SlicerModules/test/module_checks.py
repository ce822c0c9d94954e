"""Shared by the Slicer module tests: the phantom inputs (NRRD, LPS with flipped axes) and the checks of
outputs on the input's grid and of Slicer segmentation files. Standard library only."""
import os

import nrrd


class Checker:
    """Collects failures; every check prints what failed."""

    def __init__(self, work):
        self.work = work
        self.failures = []

    def path(self, name):
        return os.path.join(self.work, name)

    def check(self, condition, message):
        if not condition:
            self.failures.append(message)
            print("FAIL: " + message)
        return condition

    def phantom(self, name, size, centre, radii, spacing, origin):
        """An ellipsoid of intensity 100 on 20 with a deterministic ripple, and its label; returns the
        ellipsoid's voxel count."""
        image, label = [], []
        for z in range(size[2]):
            for y in range(size[1]):
                for x in range(size[0]):
                    inside = sum(((c - m) / r) ** 2 for c, m, r in zip((x, y, z), centre, radii)) <= 1.0
                    image.append((100.0 if inside else 20.0) + ((x * 7 + y * 13 + z * 5) % 11) - 5)
                    label.append(1.0 if inside else 0.0)
        nrrd.write(self.path(name + ".nrrd"), size, image, spacing, origin)
        nrrd.write(self.path(name + "-label.nrrd"), size, label, spacing, origin)
        return sum(label)

    def same_grid(self, name, output, reference):
        """Reads output; checks its sizes, directions and origin are reference's; returns (fields, voxels)."""
        fields, _, voxels = nrrd.read(output)
        ref, _, _ = nrrd.read(reference)
        self.check(nrrd.sizes(fields) == nrrd.sizes(ref), f"{name}: {output} sizes {fields['sizes']} != input's {ref['sizes']}")
        got, want = nrrd.geometry(fields), nrrd.geometry(ref)
        close = all(abs(a - b) < 1e-4 for va, vb in zip(got[0], want[0]) for a, b in zip(va, vb)) and \
            all(abs(a - b) < 1e-4 for a, b in zip(got[1], want[1]))
        self.check(close, f"{name}: {output} grid {got} != input's {want} (LPS geometry lost)")
        return fields, voxels

    def segmentation(self, name, seg_path, reference, segments, label_voxels):
        """The Slicer segmentation fields (vtkMRMLSegmentationStorageNode) and voxels of seg_path;
        segments: [(label value, name)]."""
        if not self.check(os.path.exists(seg_path), f"{name}: no segmentation {seg_path}"):
            return
        fields, voxels = self.same_grid(name, seg_path, reference)
        _, pairs, _ = nrrd.read(seg_path)
        check = self.check
        check(fields["type"] in ("unsigned char", "uchar"), f"{name}: segmentation voxel type {fields['type']}")
        check(pairs.get("Segmentation_MasterRepresentation") == "Binary labelmap",
              f"{name}: Segmentation_MasterRepresentation = {pairs.get('Segmentation_MasterRepresentation')!r}")
        check(pairs.get("Segmentation_ReferenceImageExtentOffset") == "0 0 0", f"{name}: ReferenceImageExtentOffset")
        check("Binary labelmap" in pairs.get("Segmentation_ContainedRepresentationNames", ""),
              f"{name}: Segmentation_ContainedRepresentationNames")
        check(voxels == [int(v) for v in label_voxels], f"{name}: segmentation voxels differ from the label volume")
        size = nrrd.sizes(fields)
        for i, (label_value, segment_name) in enumerate(segments):
            key = f"Segment{i}_"
            check(pairs.get(key + "Name") == segment_name, f"{name}: {key}Name = {pairs.get(key + 'Name')!r}, not {segment_name!r}")
            check(pairs.get(key + "LabelValue") == str(label_value), f"{name}: {key}LabelValue = {pairs.get(key + 'LabelValue')!r}")
            check(pairs.get(key + "Layer") == "0", f"{name}: {key}Layer = {pairs.get(key + 'Layer')!r}")
            check(bool(pairs.get(key + "ID")), f"{name}: no {key}ID (Slicer counts segments by their ID fields)")
            color = pairs.get(key + "Color", "").split()
            check(len(color) == 3 and all(0.0 <= float(c) <= 1.0 for c in color), f"{name}: {key}Color = {color}")
            want = bounding_extent(voxels, size, label_value)
            check(pairs.get(key + "Extent") == want, f"{name}: {key}Extent = {pairs.get(key + 'Extent')!r}, voxels span {want!r}")
        check(f"Segment{len(segments)}_ID" not in pairs, f"{name}: more segments than {len(segments)}")
        return pairs


def dice(labels, reference_path, value=1, reference_value=None):
    """Dice of (labels == value) against the label map at reference_path (its voxels equal to
    reference_value, or != 0 when None)."""
    _, _, reference = nrrd.read(reference_path)
    a = [v == value for v in labels]
    b = [v != 0 if reference_value is None else v == reference_value for v in reference]
    both = sum(1 for x, y in zip(a, b) if x and y)
    return 2.0 * both / max(1, sum(a) + sum(b))


def bounding_extent(voxels, size, value):
    """Slicer's extent "i0 i1 j0 j1 k0 k1" of the voxels equal to value; "0 -1 0 -1 0 -1" for none."""
    box = [None] * 6
    for i, v in enumerate(voxels):
        if v == value:
            x, y, z = i % size[0], (i // size[0]) % size[1], i // (size[0] * size[1])
            for d, c in enumerate((x, y, z)):
                box[2 * d] = c if box[2 * d] is None else min(box[2 * d], c)
                box[2 * d + 1] = c if box[2 * d + 1] is None else max(box[2 * d + 1], c)
    return "0 -1 0 -1 0 -1" if box[0] is None else " ".join(map(str, box))


def label_centre_lps(label_path, value):
    """The centroid of the label's voxels in physical LPS millimetres (origin + sum of index x direction)."""
    fields, _, voxels = nrrd.read(label_path)
    size = nrrd.sizes(fields)
    directions, origin = nrrd.geometry(fields)
    total, count = [0.0, 0.0, 0.0], 0
    for i, v in enumerate(voxels):
        if v == value:
            index = (i % size[0], (i // size[0]) % size[1], i // (size[0] * size[1]))
            for k in range(3):
                total[k] += origin[k] + sum(index[j] * directions[j][k] for j in range(3))
            count += 1
    return [t / max(1, count) for t in total]
