"""River's side of scripts/bench-streaming-peer (run with the venv's python that has `river`).

  export NAME OUT.arff [--limit N]   one of river's bundled classification sets (inside its wheel: no
                                     download) as ARFF: attributes in river's order, numeric when every
                                     value is a number, the class nominal with all its values declared
  river STREAM OUT.json --model arf|adwin-bagging [--trees M] [--limit N] [--seed S]
                                     prequential (test, then learn) run of river's ARFClassifier or
                                     ADWINBaggingClassifier(HoeffdingTreeClassifier) on a CSV (written by
                                     Canopy's generators) or ARFF (from export): both read the same values
  table JSON...                      the side-by-side table of runs made by the shell script
"""
import argparse
import csv
import json
import time

BUNDLED = {  # river's bundled classification sets (files inside the wheel)
    "bananas": "Bananas",
    "phishing": "Phishing",
    "imagesegments": "ImageSegments",
    "shuttle": "Shuttle",
}


def export(name, path, limit):
    from river import datasets

    if name not in BUNDLED:
        raise SystemExit(f"streaming_peer.py: unknown river set {name} (one of {', '.join(BUNDLED)})")
    rows = []
    for i, (x, y) in enumerate(getattr(datasets, BUNDLED[name])()):
        if limit and i >= limit:
            break
        rows.append((x, y))
    names = list(rows[0][0].keys())
    numeric = {n: all(isinstance(x.get(n), (int, float)) and not isinstance(x.get(n), bool) for x, _ in rows) for n in names}
    classes = sorted({str(y) for _, y in rows})

    def nominal_values(n):
        return sorted({str(x[n]) for x, _ in rows})

    with open(path, "w") as f:
        f.write(f"@relation river-{name}\n")
        for n in names:
            kind = "numeric" if numeric[n] else "{" + ",".join(nominal_values(n)) + "}"
            f.write(f"@attribute '{n}' {kind}\n")
        f.write("@attribute class {" + ",".join(classes) + "}\n@data\n")
        for x, y in rows:
            f.write(",".join(repr(float(x[n])) if numeric[n] else str(x[n]) for n in names) + f",{y}\n")
    print(f"{name}: {len(rows)} instances, {len(names)} attributes, {len(classes)} classes -> {path}")


def read_stream(path, limit):
    """(x, y) rows: numbers as floats, anything else as strings (river's trees split those as nominal)."""

    def value(v):
        try:
            return float(v)
        except ValueError:
            return v

    rows = []
    with open(path) as f:
        if path.endswith(".arff"):
            names, numeric = [], []
            for line in f:
                line = line.strip()
                if line.lower().startswith("@attribute"):
                    rest = line[len("@attribute"):].strip()
                    name, kind = (rest[1:].split("'", 1) if rest.startswith("'") else rest.split(None, 1))
                    names.append(name)
                    numeric.append(kind.strip().lower() in ("numeric", "real", "integer"))
                elif line.lower().startswith("@data"):
                    break
            for line in f:
                if not line.strip():
                    continue
                r = line.strip().split(",")
                x = {n: (float(v) if num else v) for n, num, v in zip(names[:-1], numeric[:-1], r[:-1])}
                rows.append((x, r[-1]))
                if limit and len(rows) >= limit:
                    break
        else:
            reader = csv.reader(f)
            header = next(reader)
            for r in reader:
                rows.append(({n: value(v) for n, v in zip(header[:-1], r[:-1])}, r[-1]))
                if limit and len(rows) >= limit:
                    break
    return rows


def run_river(path, report, model_name, trees, limit, seed):
    import river
    from river import ensemble, forest, metrics, tree

    rows = read_stream(path, limit)
    if model_name == "arf":  # defaults: sqrt features, lambda 6, ADWIN 0.01/0.001, NBAdaptive leaves
        model = forest.ARFClassifier(n_models=trees, seed=seed)
    elif model_name == "adwin-bagging":  # Oza bagging (Poisson(1)) with ADWIN resetting the worst model
        model = ensemble.ADWINBaggingClassifier(model=tree.HoeffdingTreeClassifier(), n_models=trees, seed=seed)
    else:
        raise SystemExit(f"streaming_peer.py: unknown model {model_name}")
    accuracy, kappa = metrics.Accuracy(), metrics.CohenKappa()
    start, cpu_start = time.perf_counter(), time.process_time()
    for x, y in rows:
        p = model.predict_one(x)
        accuracy.update(y, "" if p is None else p)
        kappa.update(y, "" if p is None else p)
        model.learn_one(x, y)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    out = {"library": f"river {river.__version__}", "model": model_name, "instances": len(rows),
           "seconds": seconds, "instances_per_second": len(rows) / seconds, "cpu_seconds": cpu_seconds,
           "instances_per_cpu_second": len(rows) / cpu_seconds, "accuracy": accuracy.get(),
           "kappa": kappa.get(), "trees": trees, "seed": seed}
    json.dump(out, open(report, "w"), indent=2)
    print(f"river {model_name}: {len(rows)} instances, {seconds:.1f} s ({cpu_seconds:.1f} CPU s), "
          f"{out['instances_per_cpu_second']:.1f} instances per CPU s, accuracy {out['accuracy']:.4f}")


def table(paths):
    """One line per stream: Canopy (batch 1, 1 thread) and each river model on the same instances."""
    print(f"\n{'stream':34} {'inst':>7} {'Canopy acc':>10} {'river ARF':>9} {'ADWIN bag':>9} "
          f"{'Canopy-ARF':>10} {'Canopy inst/CPU s':>17} {'ARF inst/CPU s':>14} {'x ARF CPU':>9}")
    for p in paths:
        d = json.load(open(p))
        c, arf, bag = d["canopy"], d.get("arf"), d.get("adwin-bagging")
        rate = c["instances"] / c["cpu_seconds"] if c["cpu_seconds"] > 0 else float("inf")

        def acc(r):
            return f"{r['accuracy']:.4f}" if r else "-"

        diff = f"{100 * (c['accuracy'] - arf['accuracy']):+.2f} pt" if arf else "-"
        arf_rate = f"{arf['instances_per_cpu_second']:.1f}" if arf else "-"
        ratio = f"{rate / arf['instances_per_cpu_second']:.0f}" if arf else "-"
        print(f"{d['stream']:34} {c['instances']:>7} {c['accuracy']:>10.4f} {acc(arf):>9} {acc(bag):>9} "
              f"{diff:>10} {rate:>17.0f} {arf_rate:>14} {ratio:>9}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export")
    e.add_argument("name")
    e.add_argument("out")
    e.add_argument("--limit", type=int, default=0)
    r = sub.add_parser("river")
    r.add_argument("stream")
    r.add_argument("out")
    r.add_argument("--model", default="arf")
    r.add_argument("--trees", type=int, default=100)
    r.add_argument("--limit", type=int, default=0)
    r.add_argument("--seed", type=int, default=1)
    t = sub.add_parser("table")
    t.add_argument("reports", nargs="+")
    a = ap.parse_args()
    if a.command == "export":
        export(a.name, a.out, a.limit)
    elif a.command == "river":
        run_river(a.stream, a.out, a.model, a.trees, a.limit, a.seed)
    else:
        table(a.reports)


if __name__ == "__main__":
    main()
