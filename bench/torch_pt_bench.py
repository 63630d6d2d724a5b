#!/usr/bin/python3
"""The .pt bench: read_torch_pt (importer/src/torch_pt_file.h) against Python's torch.load.

    /usr/bin/python3 bench/torch_pt_bench.py BUILD_DIR [--mb 256] [--runs 5]

torch.save writes a float32 tensor of MB megabytes (what msprobe's tensor mode writes into
dump_tensor_data/, one file per tensor), and a transposed view of the same size (the storage saved
whole, read by a gather). Each is read once to warm the page cache, then RUNS times by
BUILD_DIR/bench/read_torch_pt (the reader alone, in one process) and by torch.load in one
/usr/bin/python3 process (its interpreter start and `import torch` not counted): the median CPU
time (user + sys: the machine is shared, wall time is not this process's) of a read, in GB/s of
tensor data, and their ratio.

Prints one JSON object on its last line (bench/report.py reads it into docs/PERFORMANCE.md).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

PYTHON = "/usr/bin/python3"
TORCH_LOAD = """
import sys, time, torch
times = []
for _ in range(int(sys.argv[2])):
    start = time.process_time()
    t = torch.load(sys.argv[1])
    t = t.contiguous()
    times.append(time.process_time() - start)
    del t
print(" ".join("%.6f" % s for s in times))
"""
WRITE = """
import sys, torch
n = int(sys.argv[2]) * (1 << 20) // 4
t = torch.randn(n // 4096, 4096)
torch.save(t, sys.argv[1] + "/contiguous.pt")
torch.save(t.t(), sys.argv[1] + "/transposed.pt")
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build_dir")
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    reader = os.path.join(args.build_dir, "bench", "read_torch_pt")
    try:
        import torch  # noqa: F401  (only whether it is there)
    except ImportError:
        print(json.dumps({"available": False, "error": "/usr/bin/python3 has no torch"}))
        return 0
    result = {"available": True, "mb": args.mb, "runs": args.runs, "torch": torch.__version__, "files": []}
    with tempfile.TemporaryDirectory(prefix="npuscope_pt_bench_") as tmp:
        subprocess.run([PYTHON, "-c", WRITE, tmp, str(args.mb)], check=True)
        for name in ("contiguous", "transposed"):
            path = os.path.join(tmp, name + ".pt")
            with open(path, "rb") as f:  # the page cache warm
                while f.read(1 << 24):
                    pass
            out = subprocess.run([reader, path, str(args.runs)], check=True, capture_output=True, text=True).stdout
            fields = out.split()
            data_bytes = int(fields[0])
            ours = statistics.median(float(s) for s in fields[1:])
            out = subprocess.run([PYTHON, "-c", TORCH_LOAD, path, str(args.runs)], check=True, capture_output=True,
                                 text=True).stdout
            theirs = statistics.median(float(s) for s in out.split())
            result["files"].append({
                "name": name, "bytes": data_bytes, "file_bytes": os.path.getsize(path),
                "read_s": ours, "read_gb_s": data_bytes / ours / 1e9,
                "torch_s": theirs, "torch_gb_s": data_bytes / theirs / 1e9, "ratio": theirs / ours,
            })
            print("%s: read_torch_pt %.2f GB/s, torch.load %.2f GB/s (%.1fx)" % (
                name, data_bytes / ours / 1e9, data_bytes / theirs / 1e9, theirs / ours), file=sys.stderr)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
