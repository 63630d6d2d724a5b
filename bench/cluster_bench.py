#!/usr/bin/python3
"""The many-ranks bench: `npuscope cluster` on synthetic rank traces, and real MPI ranks end to end.

    /usr/bin/python3 bench/cluster_bench.py BUILD_DIR [--ranks 256] [--tasks 100000] [--real-ranks 16]

1. bench/write_rank_traces writes RANKS synthetic rank traces of TASKS tasks each through the real
   TraceWriter (a data-parallel job with one straggler, rank 7), into a temporary directory.
2. `npuscope cluster DIR` analyses them on threads, then `mpirun -np 2 npuscope cluster DIR` on two
   MPI processes: wall time and the peak resident memory of the largest process (wait4's rusage, which
   covers the processes mpirun waits for).
3. REAL_RANKS ranks of samples/mpi_data_parallel under `mpirun ... npuscope run -o rank_%r.db`, one slowed
   1.5x, then `npuscope cluster` on their traces: wall times, and whether it named the slowed rank alone.

Prints one JSON object on its last line (bench/report.py reads it into docs/PERFORMANCE.md).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}


def timed(command, env=None):
    """Runs command; returns (seconds, peak RSS in MiB of the largest process, stdout)."""
    full_env = dict(os.environ, **(env or {}))
    start = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=full_env)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(command), code, out.decode(errors="replace")[-2000:]))
    return seconds, usage.ru_maxrss / 1024.0, out.decode(errors="replace")


def named_slow_ranks(report):
    """The ranks the report's slow-rank table names (its "Slow Rank" column, per part)."""
    return sorted({row["Slow Rank"] for row in report.get("cluster_slow_rank", []) if row.get("Slow Rank") is not None})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--ranks", type=int, default=256)
    parser.add_argument("--tasks", type=int, default=100000)
    parser.add_argument("--real-ranks", type=int, default=16)
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    npuscope = os.path.join(build, "cli", "npuscope")
    result = {"ranks": args.ranks, "tasks_per_rank": args.tasks, "real_ranks": args.real_ranks,
              "cores": os.cpu_count()}
    work = tempfile.mkdtemp(prefix="npuscope_cluster_bench_")
    try:
        traces = os.path.join(work, "synthetic")
        seconds, _, _ = timed([os.path.join(build, "bench", "write_rank_traces"), traces, str(args.ranks),
                               str(args.tasks)])
        result["write_s"] = seconds
        result["trace_mib"] = sum(os.path.getsize(os.path.join(traces, f)) for f in os.listdir(traces)) / 2**20
        subprocess.run(["sync"], check=False)
        report = os.path.join(work, "report.json")
        seconds, rss, _ = timed([npuscope, "cluster", traces, "--format", "json", "-o", report])
        result["threads_s"], result["threads_rss_mib"] = seconds, rss
        with open(report) as f:
            result["threads_slow_ranks"] = named_slow_ranks(json.load(f))
        if shutil.which("mpirun"):
            seconds, rss, _ = timed(["mpirun", "--oversubscribe", "-np", "2", npuscope, "cluster", traces,
                                     "--format", "json", "-o", report], MPI_ENV)
            result["mpi2_s"], result["mpi2_rss_mib"] = seconds, rss
            with open(report) as f:
                result["mpi2_slow_ranks"] = named_slow_ranks(json.load(f))
            shutil.rmtree(traces)

            real = os.path.join(work, "real")
            slow = args.real_ranks // 3
            seconds, _, _ = timed(["mpirun", "--oversubscribe", "-np", str(args.real_ranks), npuscope, "run", "-o",
                                   os.path.join(real, "rank_%r.db"), "--",
                                   os.path.join(build, "samples", "mpi_data_parallel"), "--steps", "10", "--spec",
                                   os.path.join(ROOT, "samples", "specs", "ascend910b_device_bound.json"),
                                   "--global-batch", str(8 * args.real_ranks), "--slow-rank", str(slow),
                                   "--slow-factor", "1.5"], MPI_ENV)
            result["real_run_s"] = seconds
            seconds, rss, _ = timed([npuscope, "cluster", real, "--format", "json", "-o", report])
            result["real_cluster_s"], result["real_cluster_rss_mib"] = seconds, rss
            with open(report) as f:
                result["real_slowed_rank"], result["real_slow_ranks"] = slow, named_slow_ranks(json.load(f))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
