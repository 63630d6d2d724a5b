#!/usr/bin/python3
"""The dump comparison bench: two msprobe statistics dumps of ENTRIES entries compared by npuscope and
by the Python reference of the same work, side by side.

    /usr/bin/python3 bench/compare_dumps_bench.py BUILD_DIR [--entries 100000] [--runs 3]

1. The generator writes NPU and bench dump_path/step0/rank0/dump.json (task statistics, level L1) of
   ENTRIES entries, as bench/compare_dumps_bench.cpp builds them in memory: an API entry of two tensor
   inputs, an int argument and a tensor output, every tenth a module entry with its weight; the NPU's
   statistics off by ~1e-4 relatively.
2. The Python reference: json.load of both files, then per NPU entry its bench entry by name and per
   value by slot msprobe's statistics cells (Max/Min/Mean/L2norm diff and relative error as text) and
   its statistics checkers (NaN/Inf in the NPU max or min, the inputs' and outputs' NormRelativeErr):
   what msprobe's compare does without pandas. CPU seconds measured in its process.
3. npuscope: `npuscope compare NPU BENCH --format csv -o DIR`, the whole process (reading both
   dump.json files, comparing, writing compare_result.csv): CPU seconds (user + sys, wait4).
Each RUNS times, the median. Prints one JSON object on its last line.
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
import time

REFERENCE = r'''
import json, sys, time
t = time.process_time()
npu = json.load(open(sys.argv[1]))["data"]
bench = json.load(open(sys.argv[2]))["data"]
KEYS = ("Max", "Min", "Mean", "Norm")
def cells(n, b):
    out = []
    for k in KEYS:
        x, y = n.get(k), b.get(k)
        if str(x) == str(y):
            out.append(("0", "0"))
        elif isinstance(x, (int, float)) and isinstance(y, (int, float)):
            d = x - y
            out.append((str(d), "inf" if y == 0 else str(abs(d / y * 100)) + "%"))
        else:
            out.append(("N/A", "N/A"))
    return out
def share(rel):
    return float(rel[:-1]) / 100 if rel.endswith("%") else None
rows = errors = 0
for name, entry in npu.items():
    other = bench.get(name)
    if other is None:
        continue
    ins, outs = [], []
    for key in ("input_args", "input_kwargs", "output", "parameters"):
        values, bvalues = entry.get(key) or [], other.get(key) or []
        if isinstance(values, dict):
            pairs = [(values[k], bvalues.get(k)) for k in values]
        else:
            pairs = list(zip(values, bvalues))
        for v, w in pairs:
            if not isinstance(v, dict) or not isinstance(w, dict):
                continue
            if v.get("type") != "torch.Tensor":
                v = dict(Max=v.get("value"), Min=v.get("value"), Mean=v.get("value"), Norm=v.get("value"))
                w = dict(Max=w.get("value"), Min=w.get("value"), Mean=w.get("value"), Norm=w.get("value"))
            c = cells(v, w)
            rows += 1
            for x in (v.get("Max"), v.get("Min")):
                if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
                    errors += 1
            (outs if key == "output" else ins).append(share(c[3][1]))
    inn = max([s for s in ins if s is not None] or [0.0])
    out = max([s for s in outs if s is not None] or [0.0])
    if abs(inn) < 0.1 and abs(out) > 0.5:
        errors += 1
print(time.process_time() - t, rows, errors)
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


def cpu_seconds(command):
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(" ".join(command) + " failed:\n" + out.decode(errors="replace")[-2000:])
    return usage.ru_utime + usage.ru_stime, out.decode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("--entries", type=int, default=100000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    npuscope = os.path.join(os.path.abspath(args.build_dir), "cli", "npuscope")
    tmp = tempfile.mkdtemp(prefix="npuscope_dump_bench_")
    try:
        npu_json = write_dump(os.path.join(tmp, "npu"), args.entries, True)
        bench_json = write_dump(os.path.join(tmp, "bench"), args.entries, False)
        size = os.path.getsize(npu_json) + os.path.getsize(bench_json)
        python, ours = [], []
        for _ in range(args.runs):
            _, out = cpu_seconds(["/usr/bin/python3", "-c", REFERENCE, npu_json, bench_json])
            python.append(float(out.split()[0]))
            out_dir = os.path.join(tmp, "out")
            shutil.rmtree(out_dir, ignore_errors=True)
            try:
                seconds, _ = cpu_seconds([npuscope, "compare", os.path.join(tmp, "npu"), os.path.join(tmp, "bench"),
                                          "--format", "csv", "-o", out_dir])
                ours.append(seconds)
            except (RuntimeError, FileNotFoundError) as e:
                print(f"compare_dumps_bench.py: npuscope compare of dumps failed: {e}", file=sys.stderr)
        result = {"entries": args.entries, "json_mb": round(size / 2**20, 1),
                  "python_s": round(statistics.median(python), 3),
                  "npuscope_s": round(statistics.median(ours), 3) if ours else None}
        if ours:
            result["speedup"] = round(result["python_s"] / result["npuscope_s"], 1)
        print(json.dumps(result))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
