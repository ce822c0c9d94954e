"""The little of NRRD the Slicer module tests need: write float/uchar volumes (raw, LPS) and read
ITK-written ones (raw or gzip), header fields and key:=value pairs included. Standard library only."""
import gzip
import struct

TYPES = {"float": "f", "uchar": "B", "unsigned char": "B", "short": "h", "ushort": "H", "unsigned short": "H",
         "int": "i", "int32": "i", "uint": "I", "unsigned int": "I", "double": "d"}


def write(path, size, values, spacing=(1.5, 1.5, 1.5), origin=(0.0, 0.0, 0.0), flip_xy=True, kind="float"):
    """An LPS volume; flip_xy gives RAS-like axes (-x, -y), as scanners write, so a run that loses the
    direction cosines shows."""
    sx, sy, sz = spacing
    dirs = ((-sx if flip_xy else sx, 0, 0), (0, -sy if flip_xy else sy, 0), (0, 0, sz))
    header = ("NRRD0004\ntype: %s\ndimension: 3\nspace: left-posterior-superior\nsizes: %d %d %d\n"
              "space directions: (%g,%g,%g) (%g,%g,%g) (%g,%g,%g)\nkinds: domain domain domain\n"
              "endian: little\nencoding: raw\nspace origin: (%g,%g,%g)\n\n"
              % ((kind,) + tuple(size) + dirs[0] + dirs[1] + dirs[2] + tuple(origin)))
    with open(path, "wb") as f:
        f.write(header.encode())
        f.write(struct.pack("<%d%s" % (len(values), TYPES[kind]), *values))


def read(path):
    """(fields, key_values, voxels): header fields 'name: value', the 'key:=value' pairs, voxel list."""
    raw = open(path, "rb").read()
    end = raw.index(b"\n\n")
    lines = raw[:end].decode("latin-1").split("\n")
    if not lines[0].startswith("NRRD"):
        raise ValueError(f"{path}: not a NRRD file")
    fields, pairs = {}, {}
    for line in lines[1:]:
        if line.startswith("#") or not line:
            continue
        if ":=" in line:
            k, v = line.split(":=", 1)
            pairs[k] = v
        else:
            k, v = line.split(":", 1)
            fields[k.strip()] = v.strip()
    data = raw[end + 2:]
    if fields.get("encoding") in ("gzip", "gz"):
        data = gzip.decompress(data)
    elif fields.get("encoding") != "raw":
        raise ValueError(f"{path}: encoding {fields.get('encoding')} not handled here")
    code = TYPES[fields["type"]]
    count = len(data) // struct.calcsize(code)
    order = ">" if fields.get("endian") == "big" else "<"
    return fields, pairs, list(struct.unpack(order + "%d%s" % (count, code), data))


def sizes(fields):
    return tuple(int(v) for v in fields["sizes"].split())


def geometry(fields):
    """Space directions and origin as tuples of floats (for comparing grids)."""
    def vectors(text):
        return tuple(tuple(float(c) for c in v.strip("()").split(",")) for v in text.split())
    return vectors(fields["space directions"]), vectors(fields["space origin"])[0]
