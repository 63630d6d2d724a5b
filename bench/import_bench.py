#!/usr/bin/python3
"""The import bench: `npuscope import` of real Kineto traces, against Python's own json.load.

    /usr/bin/python3 bench/import_bench.py BUILD_DIR [--realdata DIR] [--sizes 0.1,1,4] [--big] [--runs 3]

1. Throughput: the biggest Kineto trace of shared/realdata (inflated to a plain .json, as Python reads
   it) imported by `npuscope import` and loaded by /usr/bin/python3's json.load, side by side, each
   RUNS times (median): MB of JSON per CPU second (user + sys of the process, from wait4: per core,
   whatever else the machine runs), and their ratio. Python's time is json.load's alone (measured in
   its process, without the interpreter's start); npuscope's is the whole process, trace written;
   bench/read_chrome_events gives the JSON reading's share (chrome_events.h, events read, not mapped).
2. Memory: synthetic traces of SIZES GB made by repeating that trace's events (bench/make_kineto_trace,
   Note [Repeated Kineto trace]) imported one by one: peak RSS (wait4) and throughput. --big adds a
   10 GB one (it needs ~15 GB of disk for the trace and its import, deleted after).

Prints one JSON object on its last line (bench/report.py reads it into docs/PERFORMANCE.md).
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"
JSON_LOAD = "import json, sys, time\nt = time.process_time()\njson.load(open(sys.argv[1]))\nprint(time.process_time() - t)"


def run(command):
    """Runs command; returns (wall s, CPU s of user + sys, peak RSS MiB, stdout)."""
    start = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(command), out.decode(errors="replace")[-2000:]))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, out.decode(errors="replace")


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def biggest_kineto_trace(realdata):
    best = None
    for folder, _, files in os.walk(os.path.join(realdata, "kineto")):
        for name in files:
            if name.endswith(".json") or name.endswith(".json.gz"):
                path = os.path.join(folder, name)
                opener = gzip.open if name.endswith(".gz") else open
                with opener(path, "rb") as f:
                    size = sum(len(chunk) for chunk in iter(lambda: f.read(1 << 20), b""))
                if best is None or size > best[1]:
                    best = (path, size)
    return best


def import_trace(npuscope, trace, db):
    wall, cpu, rss, out = run([npuscope, "import", trace, "-o", db, "--force"])
    os.remove(db)
    return wall, cpu, rss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--realdata", default=os.path.join(ROOT, "..", "shared", "realdata"))
    parser.add_argument("--sizes", default="0.1,1,4", help="synthetic trace sizes in GB")
    parser.add_argument("--big", action="store_true", help="also a 10 GB trace")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    npuscope = os.path.join(build, "cli", "npuscope")
    maker = os.path.join(build, "bench", "make_kineto_trace")
    reader = os.path.join(build, "bench", "read_chrome_events")
    found = biggest_kineto_trace(args.realdata)
    if found is None:
        print(json.dumps({"available": False, "error": "no Kineto trace under %s/kineto" % args.realdata}))
        return 0
    source, size = found
    work = tempfile.mkdtemp(prefix="npuscope_import_bench_")
    result = {"available": True, "trace": os.path.relpath(source, args.realdata), "mb": size / 1e6,
              "cores": os.cpu_count()}
    try:
        plain = os.path.join(work, "real.pt.trace.json")
        with gzip.open(source, "rb") if source.endswith(".gz") else open(source, "rb") as f, open(plain, "wb") as o:
            shutil.copyfileobj(f, o, 1 << 20)
        npu, py, read = [], [], []
        for _ in range(args.runs):  # alternated, so that a busy neighbour weighs on all alike
            npu.append(import_trace(npuscope, plain, os.path.join(work, "real.db")))
            py.append(float(run([PYTHON, "-c", JSON_LOAD, plain])[3].strip().splitlines()[-1]))
            read.append(float(run([reader, plain])[3].split()[2]))
        result["npuscope_cpu_s"] = median(c for _, c, _ in npu)
        result["npuscope_wall_s"] = median(w for w, _, _ in npu)
        result["npuscope_rss_mib"] = max(r for _, _, r in npu)
        result["python_s"] = median(py)
        result["npuscope_mb_s"] = size / 1e6 / result["npuscope_cpu_s"]
        result["python_mb_s"] = size / 1e6 / result["python_s"]
        result["ratio"] = result["npuscope_mb_s"] / result["python_mb_s"]
        result["read_s"] = median(read)
        result["read_mb_s"] = size / 1e6 / result["read_s"]
        result["read_ratio"] = result["read_mb_s"] / result["python_mb_s"]
        print("real: npuscope import %.0f MB/s, its JSON reading alone %.0f MB/s, python json.load %.0f MB/s "
              "(%.1fx, %.1fx)" % (result["npuscope_mb_s"], result["read_mb_s"], result["python_mb_s"],
                                  result["ratio"], result["read_ratio"]), file=sys.stderr)

        sizes = [float(s) for s in args.sizes.split(",") if s] + ([10.0] if args.big else [])
        result["synthetic"] = []
        for gb in sizes:
            trace = os.path.join(work, "synthetic.json")
            _, make_cpu, _, out = run([maker, source, trace, str(int(gb * 1e9))])
            written = int(out.strip().splitlines()[-1])
            wall, cpu, rss = import_trace(npuscope, trace, os.path.join(work, "synthetic.db"))
            os.remove(trace)
            row = {"gb": written / 1e9, "wall_s": wall, "cpu_s": cpu, "rss_mib": rss,
                   "mb_s": written / 1e6 / cpu, "make_s": make_cpu}
            result["synthetic"].append(row)
            print("synthetic %.2f GB: %.1f s wall, %.0f MB/s per core, peak RSS %.0f MiB" % (
                row["gb"], wall, row["mb_s"], rss), file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
