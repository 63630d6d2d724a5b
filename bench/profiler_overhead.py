#!/usr/bin/env python3
"""End-to-end profiling overhead: whole processes, unprofiled vs under `npuscope run`.

    python3 bench/profiler_overhead.py BUILD [--runs N] [--no-breakdown]

For each workload: one warm-up run of each variant, then N (default 21) rounds that run the
unprofiled and the profiled command alternately (the order flips every round, so a drift of the
machine's load hits both alike); the result is the median wall time of each, the median of the
workload's own loop time (the "host: ... ms wall" line the samples print), the CPU time (user +
system of the whole process tree) and the size of the trace written.

Two ratios per workload, each judged against its target. The workload's slowdown: the profiled
program's wall time as `npuscope run` measures it (fork to exit, its "the program ran X s" line)
over the unprofiled program's. And the time to a ready trace, end to end: `npuscope run` until the
trace is written and summarised (the spool converted into SQLite after the program exited, Note
[Trace spool]) over the unprofiled program.

Unless --no-breakdown, two more variants split the profiled time (see profile_variants): the
workload with the injection library loaded directly (no CLI, no trace summary read back) and
`npuscope run` with the other --dump mode (none vs stats).

Progress goes to stderr; the result is one JSON line on stdout (bench/report.py reads it). A
workload missing its target prints a warning on stderr; the exit status is 0 unless a run failed.
Plain python3, no third-party modules.
"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MULTI_STREAM_ARGS = ["--ops", "100000", "--size", "16"]
LLAMA_ARGS = ["--device", "npu", "--seq", "128", "--hidden", "512", "--heads", "8", "--ffn", "1376",
              "--iterations", "20"]
LOOP_MS = re.compile(rb"host: [0-9.]+ us virtual, ([0-9.]+) ms wall")
PROGRAM_S = re.compile(rb"the program ran ([0-9.]+) s; the trace was ready ([0-9.]+) s after it exited")


def children_cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def remove_trace(path):
    for sfx in ("", "-wal", "-shm"):
        if path and os.path.exists(path + sfx):
            os.remove(path + sfx)


def run_once(variant):
    """Runs a variant's command to completion; returns (wall s, CPU s of it and its descendants,
    workload loop ms or None, profiled program s or None, trace ready after exit s or None)."""
    if variant["env"] is not None:
        remove_trace(variant["db"])  # the injection library refuses to overwrite a trace: profiling would be off
    cpu0, t0 = children_cpu_seconds(), time.perf_counter()
    p = subprocess.run(variant["cmd"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=variant["env"])
    wall, cpu = time.perf_counter() - t0, children_cpu_seconds() - cpu0
    if p.returncode != 0 or b"profiling is off" in p.stderr:
        raise RuntimeError("`%s` exited with %d: %s" % (" ".join(variant["cmd"]), p.returncode,
                                                       p.stderr.decode(errors="replace")[-2000:]))
    m = LOOP_MS.search(p.stdout)
    cli = PROGRAM_S.search(p.stdout)
    if variant["cmd"][1:2] == ["run"] and not cli:
        raise RuntimeError("`%s` did not say how long the program ran" % " ".join(variant["cmd"]))
    return (wall, cpu, float(m.group(1)) if m else None, float(cli.group(1)) if cli else None,
            float(cli.group(2)) if cli else None)


def median_of(samples, index):
    values = [s[index] for s in samples if s[index] is not None]
    return statistics.median(values) if values else None


def time_alternating(variants, runs):
    """variants: {name: variant}. One warm-up each, then `runs` rounds in alternating order."""
    names = list(variants)
    samples = {name: [] for name in names}
    for name in names:
        run_once(variants[name])
    for i in range(runs):
        for name in (names if i % 2 == 0 else names[::-1]):
            samples[name].append(run_once(variants[name]))
    return {name: {"wall_s": median_of(s, 0), "cpu_s": median_of(s, 1), "loop_ms": median_of(s, 2),
                   "program_s": median_of(s, 3), "ready_after_s": median_of(s, 4),
                   "wall_all_s": [round(x[0], 4) for x in s], "program_all_s": [x[3] for x in s],
                   "trace_bytes": trace_bytes(variants[name]["db"])}
            for name, s in samples.items()}


def trace_bytes(path):
    if path is None:
        return 0
    return sum(os.path.getsize(path + sfx) for sfx in ("", "-wal") if os.path.exists(path + sfx))


def cli_variant(build, db, dump, workload):
    cmd = [os.path.join(build, "cli", "npuscope"), "run", "--force", "-o", db, "--dump", dump, "--"] + workload
    return {"cmd": cmd, "env": None, "db": db}


def inject_variant(build, db, dump, workload, spool):
    """The injection library without the CLI: writing the spool (what the program does under
    `npuscope run`, without the conversion after it) or SQLite in the process (NPUSCOPE_OUTPUT)."""
    env = dict(os.environ)
    env["NPUSCOPE_INJECTION"] = os.path.join(build, "runtime_hooks", "src", "inject", "libnpuscope_inject.so")
    env["NPUSCOPE_SPOOL" if spool else "NPUSCOPE_OUTPUT"] = db
    env["NPUSCOPE_CONFIG"] = json.dumps({"dump": dump})
    return {"cmd": workload, "env": env, "db": db}


def profile_variants(build, tmp, key, workload, dump, breakdown):
    """The unprofiled and profiled variants of one workload (plus the breakdown ones)."""
    variants = {"baseline": {"cmd": workload, "env": None, "db": None},
                "profiled": cli_variant(build, os.path.join(tmp, key + ".db"), dump, workload)}
    if breakdown:
        # The injection library alone: no CLI fork, no conversion, no summary that reads the trace back.
        variants["spool_only"] = inject_variant(build, os.path.join(tmp, key + ".spool"), dump, workload, True)
        variants["sqlite_in_process"] = inject_variant(build, os.path.join(tmp, key + "_env.db"), dump, workload,
                                                       False)
        other = "stats" if dump == "none" else "none"
        variants["dump_" + other] = cli_variant(build, os.path.join(tmp, key + "_" + other + ".db"), other, workload)
    return variants


def measure_case(build, tmp, case, runs, breakdown):
    workload = [os.path.join(build, "samples", case["sample"])] + case["args"]
    variants = profile_variants(build, tmp, case["key"], workload, case["dump"], breakdown)
    print("profiler_overhead: %s (%d runs of %d variants)" % (case["label"], runs + 1, len(variants)),
          file=sys.stderr, flush=True)
    timed = time_alternating(variants, runs)
    base, prof = timed["baseline"], timed["profiled"]
    shown = "BUILD/samples/%s %s" % (case["sample"], " ".join(case["args"]))
    result = {
        "label": case["label"], "dump": case["dump"], "target": case["target"],
        "baseline_cmd": shown,
        "profiled_cmd": "BUILD/cli/npuscope run --force -o TMP/%s.db --dump %s -- %s" % (case["key"], case["dump"], shown),
        "baseline_s": base["wall_s"], "program_s": prof["program_s"], "profiled_s": prof["wall_s"],
        "ready_after_s": prof["ready_after_s"],
        "ratio": prof["program_s"] / base["wall_s"], "end_to_end_ratio": prof["wall_s"] / base["wall_s"],
        "cpu_ratio": prof["cpu_s"] / base["cpu_s"],
        "trace_bytes": prof["trace_bytes"], "variants": timed,
    }
    result["end_to_end_target"] = case.get("end_to_end_target")
    if result["ratio"] > case["target"]:
        print("profiler_overhead: warning: %s is %.2fx slower profiled (target <= %gx)" % (
            case["label"], result["ratio"], case["target"]), file=sys.stderr)
    if case.get("end_to_end_target") and result["end_to_end_ratio"] > case["end_to_end_target"]:
        print("profiler_overhead: warning: %s: the trace is ready after %.2fx the unprofiled time (target <= %gx)" % (
            case["label"], result["end_to_end_ratio"], case["end_to_end_target"]), file=sys.stderr)
    return result


CASES = [
    {"key": "multi_stream", "sample": "multi_stream", "args": MULTI_STREAM_ARGS, "dump": "none", "target": 1.10,
     "end_to_end_target": 1.5,  # issue 40: the time to a ready trace
     "label": "multi_stream, 100k tiny ops, `--dump none`"},
    {"key": "llama_block", "sample": "llama_block", "args": LLAMA_ARGS, "dump": "stats", "target": 1.5,
     "label": "llama_block, 20 iterations, `--dump stats`"},
]


def check_build(build):
    needed = [os.path.join(build, "cli", "npuscope")] + [os.path.join(build, "samples", c["sample"]) for c in CASES]
    missing = [p for p in needed if not os.access(p, os.X_OK)]
    if missing:
        sys.exit("profiler_overhead: missing %s (build the cli and samples first)" % ", ".join(missing))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", help="the build directory (holds cli/npuscope and samples/)")
    ap.add_argument("--runs", type=int, default=21,
                    help="timed runs of each variant after the warm-up (this VM's run-to-run noise is a few percent)")
    ap.add_argument("--no-breakdown", dest="breakdown", action="store_false",
                    help="time only the unprofiled and the profiled command (not the variants that split the overhead)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    check_build(build)
    tmp = tempfile.mkdtemp(prefix="npuscope_overhead_")
    try:
        cases = [measure_case(build, tmp, c, args.runs, args.breakdown) for c in CASES]
    except RuntimeError as e:
        sys.exit("profiler_overhead: error: %s" % e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({"runs": args.runs, "load_avg": list(os.getloadavg()), "cases": cases}))


if __name__ == "__main__":
    main()
