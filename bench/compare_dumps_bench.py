#!/usr/bin/python3
"""The dump comparison bench: `npuscope compare` of two msprobe dumps, the whole command a user runs,
against the Python reference of the same work, side by side.

    /usr/bin/python3 bench/compare_dumps_bench.py BUILD_DIR [--entries 100000] [--tensor-mb 1024] [--runs 3]

1. Statistics mode. The generator writes NPU and bench dump_path/step0/rank0/dump.json (task
   statistics, level L1) of ENTRIES entries, as bench/compare_dumps_bench.cpp builds them in memory:
   an API entry of two tensor inputs, an int argument and a tensor output, every tenth a module entry
   with its weight; the NPU's statistics off by ~1e-4 relatively. The Python reference: json.load of
   both files, then per NPU entry its bench entry by name, per value msprobe's statistics cells
   (Max/Min/Mean/L2norm diff and relative error as text) and its statistics checkers, each row
   written to compare_result.csv: what msprobe's compare does without pandas.
2. Tensor mode. /usr/bin/python3's torch writes NPU and bench tensor dumps of TENSOR_MB megabytes of
   float32 tensors each (Functional.linear.N.forward entries, an input and an output of 4M elements,
   one .pt file per tensor as msprobe saves them; the NPU's off by ~1e-4), the files then in the
   page cache. The Python reference: json.load, then per value torch.load of both files and
   msprobe's metrics in numpy (npy_compare.py: the float64 copies, relative error, cosine, Euclidean
   distance, max absolute and relative error, the two error ratios), each row written to a CSV.
npuscope runs `npuscope compare NPU BENCH --format csv -o DIR` (reading both dumps, comparing,
writing compare_result.csv and the other tables): its process's CPU seconds (user + sys, wait4) and
wall seconds; the reference's are measured in its process (its interpreter start and imports not
counted). Each RUNS times, the medians. The machine is shared: CPU seconds are what is judged.
Prints one JSON object on its last line (bench/report.py reads it into docs/PERFORMANCE.md).
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

from import_bench import run  # (wall s, CPU s, peak RSS MiB, output): one timer for the bench scripts

PYTHON = "/usr/bin/python3"

STATISTICS_REFERENCE = r'''
import csv, json, sys, time
cpu, wall = time.process_time(), time.perf_counter()
npu = json.load(open(sys.argv[1]))["data"]
bench = json.load(open(sys.argv[2]))["data"]
KEYS = ("Max", "Min", "Mean", "Norm")
def cells(n, b):
    diffs, rels = [], []
    for k in KEYS:
        x, y = n.get(k), b.get(k)
        if str(x) == str(y):
            diffs.append("0"); rels.append("0")
        elif isinstance(x, (int, float)) and isinstance(y, (int, float)):
            d = x - y
            diffs.append(str(d)); rels.append("inf" if y == 0 else str(abs(d / y * 100)) + "%")
        else:
            diffs.append("N/A"); rels.append("N/A")
    return diffs, rels
def share(rel):
    return float(rel[:-1]) / 100 if rel.endswith("%") else None
out = csv.writer(open(sys.argv[3], "w", newline=""))
rows = errors = 0
for name, entry in npu.items():
    other = bench.get(name)
    if other is None:
        continue
    ins, outs, lines = [], [], []
    for key in ("input_args", "input_kwargs", "output", "parameters"):
        values, bvalues = entry.get(key) or [], other.get(key) or []
        if isinstance(values, dict):
            pairs = [(k, values[k], bvalues.get(k)) for k in values]
        else:
            pairs = [(i, v, w) for i, (v, w) in enumerate(zip(values, bvalues))]
        for slot, v, w in pairs:
            if not isinstance(v, dict) or not isinstance(w, dict):
                continue
            if v.get("type") != "torch.Tensor":
                v = dict(Max=v.get("value"), Min=v.get("value"), Mean=v.get("value"), Norm=v.get("value"))
                w = dict(Max=w.get("value"), Min=w.get("value"), Mean=w.get("value"), Norm=w.get("value"))
            diffs, rels = cells(v, w)
            rows += 1
            for x in (v.get("Max"), v.get("Min")):
                if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
                    errors += 1
            (outs if key == "output" else ins).append(share(rels[3]))
            row_name = "%s.%s.%s" % (name, "output" if key == "output" else key.split("_")[0], slot)
            lines.append([row_name, row_name, str(v.get("dtype")), str(w.get("dtype")), str(v.get("shape")),
                          str(w.get("shape")), str(v.get("requires_grad")), str(w.get("requires_grad"))] + diffs +
                         rels + [str(v.get(k)) for k in KEYS] + [str(w.get(k)) for k in KEYS] + ["True"])
    inn = max([s for s in ins if s is not None] or [0.0])
    outm = max([s for s in outs if s is not None] or [0.0])
    result = "error" if abs(inn) < 0.1 and abs(outm) > 0.5 else "pass"
    errors += result == "error"
    for line in lines:
        out.writerow(line + [result, "[]", "N/A"])
print(time.process_time() - cpu, time.perf_counter() - wall, rows, errors)
'''

TENSOR_REFERENCE = r'''
import csv, json, os, sys, time
import numpy as np
import torch
cpu, wall = time.process_time(), time.perf_counter()
npu_dir, bench_dir = sys.argv[1], sys.argv[2]
npu = json.load(open(os.path.join(npu_dir, "dump.json")))["data"]
bench = json.load(open(os.path.join(bench_dir, "dump.json")))["data"]
def read_pt(folder, name):  # msprobe's read_pt_data
    t = torch.load(os.path.join(folder, "dump_tensor_data", name), map_location="cpu").detach()
    if t.dtype == torch.bfloat16:
        t = t.to(torch.float32)
    return t.numpy()
def metrics(n, b):  # npy_compare.py: handle_inf_nan, reshape_value, get_relative_err, the ops
    if np.any(np.isinf(n)) or np.any(np.isnan(n)) or np.any(np.isinf(b)) or np.any(np.isnan(b)):
        return ["Nan"] * 6
    n, b = n.reshape(-1).astype(float), b.reshape(-1).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        zero = b == 0
        nn, bb = n.copy(), b.copy()
        nn[zero] += np.finfo(float).eps
        bb[zero] += np.finfo(float).eps
        rel = np.abs(np.divide(nn - bb, bb))
        cos = n.dot(b) / (np.linalg.norm(n) * np.linalg.norm(b))
    diff = n - b
    return [cos, np.linalg.norm(diff, ord=2), np.max(np.abs(diff)), np.max(np.abs(rel)),
            np.sum(rel < 0.001) / rel.size, np.sum(rel < 0.005) / rel.size]
out = csv.writer(open(sys.argv[3], "w", newline=""))
rows = nbytes = 0
for name, entry in npu.items():
    other = bench[name]
    for key in ("input_args", "output"):
        for i, (v, w) in enumerate(zip(entry[key], other[key])):
            n, b = read_pt(npu_dir, v["data_name"]), read_pt(bench_dir, w["data_name"])
            nbytes += n.nbytes
            rows += 1
            out.writerow(["%s.%s.%d" % (name, key.split("_")[0], i), v["dtype"], str(v["shape"])] +
                         [str(m) for m in metrics(n, b)] + [v["Max"], v["Min"], v["Mean"], v["Norm"]])
print(time.process_time() - cpu, time.perf_counter() - wall, rows, nbytes)
'''

TENSOR_GENERATOR = r'''
import json, os, sys
import torch
root, mb, npu = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "npu"
elements = 4 << 20  # 16 MB of float32 a tensor
folder = os.path.join(root, "step0", "rank0")
data_dir = os.path.join(folder, "dump_tensor_data")
os.makedirs(data_dir)
gen, noise = torch.Generator().manual_seed(38), torch.Generator().manual_seed(7)
data = {}
for i in range(max(1, mb // 32)):
    entry = "Functional.linear.%d.forward" % i
    values = {}
    for slot in ("input.0", "output.0"):
        t = torch.randn(elements, generator=gen)
        if npu:
            t = t * (1 + 1e-4 * torch.randn(elements, generator=noise))
        file = "%s.%s.pt" % (entry, slot)
        torch.save(t.clone().contiguous(), os.path.join(data_dir, file))
        values[slot] = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [elements],
                        "Max": t.max().item(), "Min": t.min().item(), "Mean": t.mean().item(),
                        "Norm": t.norm().item(), "requires_grad": False, "data_name": file}
    data[entry] = {"input_args": [values["input.0"]], "input_kwargs": {}, "output": [values["output.0"]]}
with open(os.path.join(folder, "dump.json"), "w") as f:
    json.dump({"task": "tensor", "level": "L1", "framework": "pytorch", "dump_data_dir": data_dir, "data": data}, f)
for name in ("stack.json", "construct.json"):
    with open(os.path.join(folder, name), "w") as f:
        f.write("{}")
'''


def tensor(rng, noise):
    stats = [3 + rng.gauss(0, 1), -3 + rng.gauss(0, 1), rng.gauss(0, 1) * 1e-3, 100 + rng.gauss(0, 1)]
    stats = [s * (1 + rng.gauss(0, noise)) for s in stats]  # drawn on both sides: their values stay in step
    return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [32, 64, 56, 56], "Max": stats[0],
            "Min": stats[1], "Mean": stats[2], "Norm": stats[3], "requires_grad": False}


def write_dump(root, entries, npu):
    rng = random.Random(7)
    noise = 1e-4 if npu else 0
    data = {}
    for i in range(entries):
        if i % 10 == 9:
            data[f"Module.layers.{i // 10}.Linear.forward.0"] = {
                "input_args": [tensor(rng, noise)], "input_kwargs": {}, "output": [tensor(rng, noise)],
                "parameters": {"weight": tensor(rng, noise)}}
        else:
            data[f"Functional.linear.{i}.forward"] = {
                "input_args": [tensor(rng, noise), tensor(rng, noise), {"type": "int", "value": 1}],
                "input_kwargs": {}, "output": [tensor(rng, noise)]}
    folder = os.path.join(root, "step0", "rank0")
    os.makedirs(folder)
    with open(os.path.join(folder, "dump.json"), "w") as f:
        json.dump({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": None, "data": data}, f)
    for name in ("stack.json", "construct.json"):
        with open(os.path.join(folder, name), "w") as f:
            f.write("{}")
    return os.path.join(folder, "dump.json")


def median(values):
    return round(statistics.median(values), 3)


def side_by_side(npuscope, npu, bench, reference, reference_args, out_dir, runs):
    """Medians of `runs` runs of npuscope compare and of the reference, alternating."""
    ours_cpu, ours_wall, ref_cpu, ref_wall, ref_out = [], [], [], [], ""
    for _ in range(runs):
        _, _, _, ref_out = run([PYTHON, "-c", reference] + reference_args + [os.path.join(out_dir, "reference.csv")])
        ref_cpu.append(float(ref_out.split()[0]))
        ref_wall.append(float(ref_out.split()[1]))
        shutil.rmtree(os.path.join(out_dir, "csv"), ignore_errors=True)
        wall, cpu, _, _ = run([npuscope, "compare", npu, bench, "--format", "csv", "-o", os.path.join(out_dir, "csv")])
        ours_cpu.append(cpu)
        ours_wall.append(wall)
    rows = sum(1 for _ in open(os.path.join(out_dir, "csv", "compare_result.csv"))) - 1
    return {"npuscope_cpu_s": median(ours_cpu), "npuscope_wall_s": median(ours_wall),
            "python_cpu_s": median(ref_cpu), "python_wall_s": median(ref_wall),
            "rows": rows, "python_rows": int(ref_out.split()[2]), "reference_out": ref_out.split()}


def statistics_case(npuscope, tmp, entries, runs):
    npu_json = write_dump(os.path.join(tmp, "npu"), entries, True)
    bench_json = write_dump(os.path.join(tmp, "bench"), entries, False)
    size = os.path.getsize(npu_json) + os.path.getsize(bench_json)
    r = side_by_side(npuscope, os.path.join(tmp, "npu"), os.path.join(tmp, "bench"), STATISTICS_REFERENCE,
                     [npu_json, bench_json], tmp, runs)
    r.pop("reference_out")
    r.update({"entries": entries, "json_mb": round(size / 2**20, 1),
              "speedup_cpu": round(r["python_cpu_s"] / r["npuscope_cpu_s"], 1)})
    shutil.rmtree(os.path.join(tmp, "npu"))
    shutil.rmtree(os.path.join(tmp, "bench"))
    return r


def tensor_case(npuscope, tmp, mb, runs):
    for side in ("npu", "bench"):
        subprocess.run([PYTHON, "-c", TENSOR_GENERATOR, os.path.join(tmp, side), str(mb), side], check=True)
    npu, bench = os.path.join(tmp, "npu", "step0", "rank0"), os.path.join(tmp, "bench", "step0", "rank0")
    data = sum(os.path.getsize(os.path.join(npu, "dump_tensor_data", f))
               for f in os.listdir(os.path.join(npu, "dump_tensor_data")))
    for side in (npu, bench):  # into the page cache
        for f in os.listdir(os.path.join(side, "dump_tensor_data")):
            with open(os.path.join(side, "dump_tensor_data", f), "rb") as file:
                while file.read(1 << 24):
                    pass
    r = side_by_side(npuscope, npu, bench, TENSOR_REFERENCE, [npu, bench], tmp, runs)
    tensor_bytes = int(r.pop("reference_out")[3])  # one side's tensor data, as the reference read it
    gb = tensor_bytes / 1e9
    r.update({"mb_per_side": round(data / 2**20), "tensors_per_side": r["rows"],
              "npuscope_gb_per_cpu_s": round(gb / r["npuscope_cpu_s"], 2),
              "npuscope_gb_per_wall_s": round(gb / r["npuscope_wall_s"], 2),
              "python_gb_per_cpu_s": round(gb / r["python_cpu_s"], 2),
              "speedup_cpu": round(r["python_cpu_s"] / r["npuscope_cpu_s"], 1)})
    return r


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("--entries", type=int, default=100000)
    parser.add_argument("--tensor-mb", type=int, default=1024, help="tensor data per side (0: no tensor case)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    npuscope = os.path.join(os.path.abspath(args.build_dir), "cli", "npuscope")
    tmp = tempfile.mkdtemp(prefix="npuscope_dump_bench_")
    result = {"load_avg": list(os.getloadavg()), "runs": args.runs}
    try:
        result["statistics"] = statistics_case(npuscope, tmp, args.entries, args.runs)
        if args.tensor_mb > 0:
            try:
                import torch  # noqa: F401  (the generator and the reference need it)
                result["tensor"] = tensor_case(npuscope, tmp, args.tensor_mb, args.runs)
            except ImportError:
                print("compare_dumps_bench.py: /usr/bin/python3 has no torch: no tensor case", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
