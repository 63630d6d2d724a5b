#!/usr/bin/env python3
"""Writes docs/PERFORMANCE.md from the results bench/run_bench.sh collected in OUT_DIR.

    python3 bench/report.py [--update] OUT_DIR REPORT.md "COMMAND"

OUT_DIR holds NAME_bench.json (Google Benchmark JSON, aggregates of repetitions),
torch_resnet18.out (bench/torch_resnet18.py's output), torch_device_bench.out
(bench/torch_device_bench.py's), torch_small_models.out (bench/torch_small_models.py's),
profiler_overhead.json (bench/profiler_overhead.py's), compare_dumps.json
(bench/compare_dumps_bench.py's) and model_zoo.json (bench/model_zoo.py's); a section
whose input is missing is left out.
Each section with a target prints a warning on stderr when the target is missed. With --update only
the sections whose inputs are in OUT_DIR are rewritten in an existing REPORT.md (e.g. after running
one bench script alone); the header and the machine section stay.
Plain python3: no third-party modules.
"""
import datetime
import glob
import json
import os
import sys

BENCH_DESCRIPTIONS = [
    "- `NpuMatmulF16`: `ops::matmul` on f16 tensors already on `npu:0`, plus `synchronize()`: the whole",
    "  emulated path (dispatch, task queue, f16->f32 loads, sgemm, f16 store with the overflow mode).",
    "- `CblasSgemmF32`: OpenBLAS `cblas_sgemm` on f32 buffers, the floor the emulator is measured against.",
    "- `CpuGoldenMatmulF32`: `ops::matmul` on cpu f32 tensors (the golden backend's path).",
    "- `OnnxResnet18Cpu` / `OnnxResnet18Npu`: one ResNet-18 forward pass (batch 1, 224x224) of",
    "  `samples/models/resnet18.onnx` through `OnnxModel::run` on `cpu` / on `npu:0` (input already on",
    "  the device; the npu time includes copying the logits to the host, i.e. waiting for every kernel).",
    "- `BM_ApiEvent` / `BM_TaskEvents` / `BM_MarkerEvent` / `BM_ApiEventCold` (inject_bench): the injection",
    "  library's callbacks called directly, bursts of 32768 calls with the drain thread writing SQLite beside",
    "  them (time per burst; see the profiler hot path section for the time per event).",
    "- `TraceWriterTasks/SPAN` (trace_writer_bench): 1M task rows through `TraceWriter::add`, SPAN rows",
    "  per call, from `create()` to `finalize()` in a fresh file.",
    "- `ViewerLoad/N/HOST` (viewer_load_bench): the viewer's timeline model of the same kind of trace, without",
    "  (0) or with (1) an API call per task.",
    "- `Analyze/N` (analyze_bench): `analyzer::analyze()` with every rule on a synthetic trace of N kernel tasks",
    "  (and as many API calls) written through the real `TraceWriter`, from opening the trace to the report.",
    "- `Diff/N` (diff_bench): `analyzer::diff()` of two synthetic traces of N kernel tasks each (the analyzer's",
    "  trace, and a copy with one op slower and one op type fallen back to the AI CPU), from opening them to the report.",
    "- `CompareTensors/NPU_GOLDEN/N` (compare_bench): `comparator::compare_tensors()` (msprobe's accuracy metrics)",
    "  on N element pairs of an NPU tensor of dtype NPU against a golden one of dtype GOLDEN, one thread.",
    "- `DispatchTinyAdd/threads:T` (dispatch_scaling_bench): unprofiled `call_op(\"Add\")` on two 16-element f32",
    "  tensors on `npu:0` from T host threads, each on its own stream: the per-op host path, in ops/s.",
]


def warn(message):
    print("run_bench.sh: warning: " + message, file=sys.stderr)


def verdict(ok, missed="BELOW"):
    return "meets" if ok else missed


# --- inputs -------------------------------------------------------------------------------------------

def load_runs(out_dir):
    """Every benchmark's median (and stddev) from OUT_DIR/*_bench.json, plus the merged context."""
    runs, context = [], {}
    for path in sorted(glob.glob(os.path.join(out_dir, "*_bench.json"))):
        with open(path) as f:
            data = json.load(f)
        context = {**data["context"], **context}
        binary = os.path.basename(path)[: -len(".json")]
        by_run = {}
        for b in data["benchmarks"]:
            by_run.setdefault(b["run_name"], {})[b.get("aggregate_name", "")] = b
        for run_name, aggs in by_run.items():
            median = aggs.get("median") or aggs.get("")
            if median is None:
                continue
            stddev = aggs.get("stddev", {}).get("real_time", 0.0)
            runs.append({"binary": binary, "name": run_name, "ms": median["real_time"], "unit": median["time_unit"],
                         "stddev": stddev, "flops": median.get("FLOPS"), "counters": median})
    return runs, context


def find(runs, prefix):
    return next((r for r in runs if r["name"].startswith(prefix)), None)


def found_cases(runs, cases, counter):
    """(run, label, judged) for each (prefix, label, judged) case whose run reports `counter`."""
    rows = [(find(runs, prefix), label, judged) for prefix, label, judged in cases]
    return [(r, label, judged) for r, label, judged in rows if r and counter in r["counters"]]


def load_json_tail(path):
    """The last line of a file as JSON (the scripts print their result last), or None."""
    try:
        with open(path) as f:
            return json.loads(f.read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return None


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


# --- sections -----------------------------------------------------------------------------------------

def header_section(runs):
    lines = ["# Performance", "",
             "Generated by `make bench` (which runs `bash bench/run_bench.sh build`); do not edit by hand.", ""]
    lines += BENCH_DESCRIPTIONS
    lines += ["",
              "Times are wall-clock medians of 3 repetitions (Google Benchmark, `--benchmark_min_time=%s`)." %
              os.environ.get("NPUSCOPE_BENCH_MIN_TIME", "0.3"),
              "",
              "| binary | benchmark | median time | stddev | throughput |",
              "|---|---|---:|---:|---:|"]
    for r in runs:
        flops = "%.1f GFLOP/s" % (r["flops"] / 1e9) if r["flops"] else ""
        lines.append("| %s | `%s` | %.2f %s | %.2f %s | %s |" % (
            r["binary"], r["name"], r["ms"], r["unit"], r["stddev"], r["unit"], flops))
    return lines


def gemm_section(runs):
    npu, sgemm = find(runs, "NpuMatmulF16/"), find(runs, "CblasSgemmF32/")
    if not (npu and sgemm and npu["unit"] == sgemm["unit"]):
        return []
    ratio = sgemm["ms"] / npu["ms"]
    if ratio < 0.5:
        warn("NPU GEMM ratio %.2f is below the 0.5 target" % ratio)
    return ["", "## Emulation overhead of the cube path", "",
            "ratio = OpenBLAS `cblas_sgemm` 1024³ f32 time / emulated NPU `ops::matmul` 1024³ f16 time "
            "(higher is better; 1.0 would mean the emulation adds nothing to the BLAS).",
            "",
            "**ratio = %.2f** (%s the target of >= 0.5)." % (ratio, verdict(ratio >= 0.5))]


COST_MODEL_RATIO_TARGET = 1.5


def cost_model_section(runs):
    pairs = (("cube (MatMul)", "BM_CostModelCube", "BM_PreviousCostModelCube"),
             ("vector", "BM_CostModelVector", "BM_PreviousCostModelVector"))
    rows = []
    for label, model, baseline in pairs:
        m, b = find(runs, model), find(runs, baseline)
        if m and b and m["unit"] == b["unit"] == "ns":
            rows.append((label, m["ms"], b["ms"]))
    if not rows:
        return []
    out = ["", "## Cost model per task", "",
           "Nanoseconds per `estimate_kernel` call (it runs once per task launched, on the launch path): the "
           "calibrated model (waves of base blocks, K fill, L2, floors; Note [Calibrated cost model]) against the "
           "estimate_kernel it replaced (a plain roofline), measured side by side. Target: at most %gx the previous "
           "time (lower is better)." % COST_MODEL_RATIO_TARGET, "",
           "| kernel | calibrated ns | previous ns | ratio |", "|---|---:|---:|---|"]
    for label, model_ns, base_ns in rows:
        ratio = model_ns / base_ns if base_ns > 0 else float("inf")
        ok = ratio <= COST_MODEL_RATIO_TARGET
        if not ok:
            warn("cost model: %s takes %.2fx the previous model's time" % (label, ratio))
        out.append("| %s | %.1f | %.1f | **%.2fx** (%s) |" % (label, model_ns, base_ns, ratio, verdict(ok, "ABOVE")))
    out += ["", "Command: `BUILD/bench/cost_model_bench`."]
    return out


OPKIT_GELU_TARGET = 100e6  # simulated elements per second, the GELU sample on 16M f16 elements


def opkit_section(runs):
    vector = [("Add f16, 8192 elements", "BM_VectorAdd<ok::half>/8192"),
              ("Add f16, 128 elements", "BM_VectorAdd<ok::half>/128"),
              ("Add f32, 8192 elements", "BM_VectorAdd<float>/8192"),
              ("Add f32, 128 elements", "BM_VectorAdd<float>/128")]
    rows = [(label, find(runs, name)) for label, name in vector]
    rows = [(label, r) for label, r in rows if r]
    gelu, builtin = find(runs, "BM_GeluCustom/"), find(runs, "BM_BuiltinGelu")
    if not rows and not gelu:
        return []
    out = ["", "## Custom kernels (opkit) simulation speed", "",
           "How fast the emulated AI Core runs an opkit kernel on this CPU: each instruction is checked by the "
           "sanitizer, computed with the NPU's numerics and timed on its pipe.", "",
           "| vector instruction | simulated elements/s | instructions/s |", "|---|---:|---:|"]
    for label, r in rows:
        c = r["counters"]
        out.append("| %s | %.0fM | %.2fM |" % (label, c.get("items_per_second", 0) / 1e6,
                                               c.get("instructions/s", 0) / 1e6))
    if gelu:
        rate = gelu["counters"].get("items_per_second", 0)
        ok = rate >= OPKIT_GELU_TARGET
        if not ok:
            warn("opkit: the GELU sample simulates %.0fM elements/s, below the 100M target" % (rate / 1e6))
        out += ["", "The GELU sample (samples/opkit/gelu_custom.cpp, 12 vector instructions per tile, double "
                "buffered) on 16M f16 elements through the dispatcher, synchronised: **%.0fM elements/s** "
                "(%.0f ms; %s the target of >= 100M)." % (rate / 1e6, gelu["ms"], verdict(ok))]
        recorded = find(runs, "BM_GeluCustomRecorded")
        if recorded and gelu["ms"] > 0:
            out.append("Recorded (a listener that takes every block and instruction record, as `npuscope run` does, "
                       "%.0f instructions per launch): %.0f ms, %.2fx the unrecorded run."
                       % (recorded["counters"].get("instructions/launch", 0), recorded["ms"],
                          recorded["ms"] / gelu["ms"]))
        if builtin:
            out.append("The emulator's built-in Gelu op (one fused kernel, no simulation) on the same tensor: "
                       "%.0f ms, so simulating the kernel instruction by instruction costs %.1fx."
                       % (builtin["ms"], gelu["ms"] / builtin["ms"] if builtin["ms"] > 0 else 0))
    out += ["", "Command: `BUILD/bench/opkit_bench`."]
    return out


# cpu <= 3x and npu <= 4x PyTorch's time on the same model, weights and machine.
RESNET18_TARGETS = (("OnnxResnet18Cpu", "emulator `cpu` (golden)", 3.0),
                    ("OnnxResnet18Npu", "emulator `npu:0` (incl. logits to host)", 4.0))


def resnet18_rows(rows, torch, has_torch):
    out = []
    if has_torch:
        by_threads = ", ".join("%s: %.1f ms" % (t, ms)
                               for t, ms in sorted(torch.get("median_ms_by_threads", {}).items()))
        out.append("| PyTorch %s (`torch.nn`, eval, no_grad; fastest of threads %s) | %.1f ms | 1.00 | |" % (
            torch["torch"], by_threads, torch["median_ms"]))
    for r, label, target in rows:
        ms = r["ms"] if r["unit"] == "ms" else float("nan")
        if has_torch:
            ratio = ms / torch["median_ms"]
            out.append("| %s | %.1f ms | **%.2f** | <= %g (%s) |" % (label, ms, ratio, target,
                                                                      verdict(ratio <= target, "ABOVE")))
            if ratio > target:
                warn("%s is %.1fx PyTorch's time (target <= %g)" % (label, ratio, target))
        else:
            out.append("| %s | %.1f ms | | <= %g |" % (label, ms, target))
    return out


def resnet18_notes(torch, has_torch):
    out = []
    if has_torch and torch.get("load_avg"):
        out += ["PyTorch ran at a load average of %s. On a small shared machine timings vary by several times "
                "from run to run (OpenMP threads on busy cores most of all, hence PyTorch's fastest thread count as "
                "the reference): compare ratios within one run of `make bench`." % ", ".join(
                    "%.2f" % x for x in torch["load_avg"]), ""]
    if not has_torch:
        why = torch.get("error", "") if torch else ""
        out.append("PyTorch not installed (apt-get install python3-torch), so no ratios." +
                   ("" if not why or "No module named" in why else " (%s)" % why))
        return out
    check = torch.get("check")
    if check and "max_abs_diff" in check:
        out.append("Same weights check: the emulator's `cpu` logits (`npuscope exec --device cpu`) vs PyTorch's on one "
                   "fixed input: max |diff| = %.3g for logits up to %.3g, argmax %s (%s)." % (
                       check["max_abs_diff"], check["max_abs_logit"], "equal" if check["argmax_equal"] else "DIFFERS",
                       "ok" if check["ok"] else "MISMATCH"))
    elif check:
        out.append("Same weights check: not run (%s)." % check.get("error", "unknown error"))
    return out


def resnet18_section(runs, out_dir):
    rows = [(find(runs, prefix), label, target) for prefix, label, target in RESNET18_TARGETS]
    if not all(r for r, _, _ in rows):
        return []
    torch = load_json_tail(os.path.join(out_dir, "torch_resnet18.out"))
    has_torch = bool(torch and torch.get("available"))
    out = ["", "## ONNX ResNet-18 forward (batch 1)", "",
           "`samples/models/resnet18.onnx` (torchvision topology, seeded random weights, 1x3x224x224 input), "
           "one forward pass; ratio = emulator time / PyTorch time (lower is better).", "",
           "| backend | median time | ratio to PyTorch | target |", "|---|---:|---:|---|"]
    out += resnet18_rows(rows, torch, has_torch)
    out.append("")
    return out + resnet18_notes(torch, has_torch)


# Other processes' share of the machine's CPU time during torch_device_bench.py above which its figures
# are flagged as measured beside other work.
BUSY_SHARE = 0.1


def torch_dispatch_rows(dispatch):
    out = ["| op (16 f32 elements) | CPU PyTorch | device | overhead (device - CPU) | ratio | target |",
           "|---|---:|---:|---:|---:|---|"]
    target = dispatch["target_overhead_us"]
    for r in dispatch["ops"]:
        ok = r["overhead_us"] <= target
        out.append("| `%s` | %.2f us | %.2f us | **%.2f us** | %.2fx | <= %g us (%s) |" % (
            r["op"], r["cpu_us"], r["device_us"], r["overhead_us"], r["ratio"], target, verdict(ok, "ABOVE")))
        if not ok:
            warn("PyTorch device: `%s` costs %.2f us more than on CPU PyTorch (target <= %g us)" % (
                r["op"], r["overhead_us"], target))
    return out


def torch_train_rows(train):
    if not train.get("available"):
        return ["", "ResNet-18 training step not measured: %s (apt-get install python3-torchvision)." %
                train.get("error", "unknown error")]
    by_threads = ", ".join("%s: %.0f ms" % (t, ms) for t, ms in sorted(train["cpu_ms_by_threads"].items()))
    ok = train["ratio"] <= train["target_ratio"]
    if not ok:
        warn("PyTorch device: a ResNet-18 training step takes %.2fx CPU PyTorch's time (target <= %gx)" % (
            train["ratio"], train["target_ratio"]))
    fallback = ", ".join("%s: %d" % kv for kv in sorted(train["fallback_ops"].items())) or "none"
    return ["| backend | median step | ratio to CPU PyTorch | target |", "|---|---:|---:|---|",
            "| CPU PyTorch (fastest of intra-op threads %s) | %.0f ms | 1.00 | |" % (by_threads, train["cpu_ms"]),
            "| device, %s (the host queues the ops in %.0f ms, then waits in `loss.item()`) | %.0f ms | **%.2f** | "
            "<= %g (%s) |" % (train["precision_mode"], train["device_host_ms"], train["device_ms"], train["ratio"],
                              train["target_ratio"], verdict(ok, "ABOVE")),
            "", "Ops through the CPU fallback during the device steps: %s." % fallback]


def torch_device_section(out_dir):
    data = load_json_tail(os.path.join(out_dir, "torch_device_bench.out"))
    if data is None:
        return []
    out = ["", "## PyTorch device", ""]
    if not data.get("available"):
        return out + ["Not measured: %s (build the PyTorch device, which needs libtorch-dev, and install "
                      "python3-torch)." % data.get("error", "unknown error")]
    dispatch = data["dispatch"]
    out += ["`npuscope.torch` (PrivateUse1 device `%s`) against CPU PyTorch %s, side by side in one process." % (
                data["device"], data["torch"]), "",
            "Dispatch overhead of a tiny op: microseconds per call, median of %d timed loops of %d calls each "
            "(garbage collector off, the device synchronized at the end of each loop, device and CPU loops "
            "alternating). Target: the device costs <= %g us more per op than CPU PyTorch." % (
                dispatch["repeats"], dispatch["loops"], dispatch["target_overhead_us"]), ""]
    out += torch_dispatch_rows(dispatch)
    train = data.get("resnet18_train")
    if train is not None and train.get("available"):
        out += ["", "A training step of torchvision's ResNet-18 (batch %d, 3x%dx%d, cross entropy, %s, f32) from the "
                "same initial weights: median of %d steps after %d warm-up steps; `loss.item()` ends each step, so "
                "a device step includes waiting for its last kernel. Target: <= %gx CPU PyTorch's time." % (
                    train["batch"], train["image"][0], train["image"][1], train["optimizer"], train["steps"],
                    train["warmup"], train["target_ratio"]), ""]
    if train is not None:
        out += torch_train_rows(train)
    others = data.get("others_cpu_share")
    if others is not None and others > BUSY_SHARE:
        out += ["", "**Measured beside other work**: other processes used %.0f%% of the machine's CPU time meanwhile. "
                "On 2 cores their threads slow OpenMP teams by several times (CPU PyTorch's most), so these ratios "
                "are not representative; run it again on an idle machine." % (100 * others)]
        warn("PyTorch device: other processes used %.0f%% of the CPU meanwhile; its figures are not "
             "representative" % (100 * others))
    omp = ", ".join("%s=%s" % kv for kv in sorted(data.get("omp_env", {}).items())) or "none set"
    out += ["", "Other processes used %s of the machine's CPU time during the run (load average %s at the start, "
            "%s at the end); OpenMP environment: %s." % (
                "?" if others is None else "%.0f%%" % (100 * others), ", ".join("%.2f" % x for x in data["load_avg"]),
                ", ".join("%.2f" % x for x in data["load_avg_end"]), omp),
            "", "Command: `PYTHONPATH=BUILD/python python3 bench/torch_device_bench.py` (JSON on stdout)."]
    return out


SMALL_MODEL_NOTES = {
    "conv1d_ctc": "Conv1d + BatchNorm1d speech model, CTC loss, Adam (batch 4, 100 frames)",
    "gan": "MLP GAN, two Adam optimizers, a discriminator and a generator step (batch 32, 784 outputs)",
    "gru_text": "embedding + bidirectional GRU classifier, label smoothing, gradient clipping, Adam (batch 16, 32 tokens)",
    "mlp": "MLP 784-256-128-10, SGD with momentum (batch 64)",
    "shufflenet_v2": "torchvision ShuffleNetV2 x0.5, SGD with momentum (batch 8, 64x64)",
    "transformer_encoder": "pre-norm Transformer encoder, 2 layers of width 128, padding mask, AdamW + OneCycle "
                           "(batch 8, 32 tokens)",
    "unet_groupnorm": "U-Net with GroupNorm, a transposed convolution and bilinear upsampling, per-pixel cross "
                      "entropy, Adam (batch 4, 64x64)",
}


def torch_small_models_section(out_dir):
    data = load_json_tail(os.path.join(out_dir, "torch_small_models.out"))
    if data is None:
        return []
    out = ["", "## PyTorch small models", ""]
    if not data.get("available"):
        return out + ["Not measured: %s (build the PyTorch device and install python3-torch)." %
                      data.get("error", "unknown error")]
    out += ["Training steps of small models on the device (`npuscope.torch`, %s) against CPU PyTorch %s, side by side "
            "in one process: forward, backward and the optimizer's step, `loss.item()` ending each step; median of "
            "%d rounds of %d steps (each after %d warm-up steps), CPU and device rounds alternating; CPU PyTorch with "
            "the faster of 1 and nproc intra-op threads. The models "
            "are the kinds of training scripts of issue 40 (tests/pytorch/test_model_families.py runs them for "
            "correctness). Target: the median ratio over the models <= %gx." % (
                data["precision_mode"], data["torch"], data["rounds"], data["steps"], data["warmup"],
                data["target_median_ratio"]),
            "", "| model | CPU PyTorch | device | ratio | ops through the CPU fallback |", "|---|---:|---:|---:|---|"]
    for name, r in sorted(data["models"].items()):
        fallback = ", ".join("%s: %d" % kv for kv in sorted(r["fallback_ops"].items())) or "none"
        out.append("| %s: %s | %.1f ms (%d thread%s) | %.1f ms | %.2fx | %s |" % (
            name, SMALL_MODEL_NOTES.get(name, ""), r["cpu_ms"], r["cpu_threads"], "" if r["cpu_threads"] == 1 else "s",
            r["device_ms"], r["ratio"], fallback))
    ok = data["met"]
    if not ok:
        warn("PyTorch small models: the median step takes %.2fx CPU PyTorch's time (target <= %gx)" % (
            data["median_ratio"], data["target_median_ratio"]))
    out += ["", "Judged: the median ratio **%.2fx** (<= %gx: %s). Load average %s at the start, %s at the end." % (
                data["median_ratio"], data["target_median_ratio"], verdict(ok, "ABOVE"),
                ", ".join("%.2f" % x for x in data["load_avg"]), ", ".join("%.2f" % x for x in data["load_avg_end"])),
            "", "Command: `PYTHONPATH=BUILD/python /usr/bin/python3 bench/torch_small_models.py` (JSON on stdout)."]
    return out


def torch_profile_section(out_dir):
    data = load_json_tail(os.path.join(out_dir, "torch_profile_overhead.json"))
    if data is None:
        return []
    median, ratio, targets = data["median_step_s"], data["ratio"], data["targets"]
    out = ["", "## PyTorch profiling", "",
           "What `npuscope run` costs a training step of %s: each variant a whole process, the step timed by the "
           "script itself (median of %d steps after a warm-up step, over rounds in rotated order; `--check-ops`, "
           "only reported, in the first round), so the interpreter's start and the trace's conversion after exit "
           "are not in it." % (
               data["workload"], data["steps_per_variant"]), "",
           "| variant | step | vs unprofiled | target |", "|---|---:|---:|---|",
           "| unprofiled | %.0f ms | 1.00x | |" % (1e3 * median["unprofiled"])]
    labels = {"dump_none": "`npuscope run --dump none`", "dump_stats": "`npuscope run --dump stats`",
              "check_ops": "`npuscope run --check-ops`"}
    for v in ("dump_none", "dump_stats", "check_ops"):
        target = targets.get(v)
        judged = "<= %gx (%s)" % (target, verdict(ratio[v] <= target, "ABOVE")) if target else "reported"
        out.append("| %s | %.0f ms | %.2fx | %s |" % (labels[v], 1e3 * median[v], ratio[v], judged))
        if target and ratio[v] > target:
            warn("PyTorch profiling: %s is %.2fx, above its target %gx" % (v, ratio[v], target))
    out += ["", "Command: `PYTHONPATH=BUILD/python /usr/bin/python3 bench/torch_profile_overhead.py BUILD` "
            "(JSON on stdout)."]
    return out


CLUSTER_TARGET_S = 30.0
CLUSTER_TARGET_MIB = 4096.0


def cluster_section(out_dir):
    # cluster.json, not *_bench.json: those names are Google Benchmark runs (load_runs).
    data = load_json_tail(os.path.join(out_dir, "cluster.json"))
    if data is None:
        return []
    ranks, tasks = data["ranks"], data["tasks_per_rank"]
    out = ["", "## Cluster analysis", "",
           "`npuscope cluster` on %d synthetic rank traces of %d tasks each (%.0f MiB in all; written through the "
           "real `TraceWriter` by `bench/write_rank_traces` in %.1f s: a data-parallel job, 10 AllReduces per "
           "step of 1000 tasks, rank 7 computing 1.2x slower), read from the page cache just after. Time of the whole process; peak RSS of the largest "
           "process (`wait4`)." % (ranks, tasks, data["trace_mib"], data["write_s"]), "",
           "| run | time | target | peak RSS | target | slow ranks named |", "|---|---:|---|---:|---|---|"]
    for key, label in (("threads", "`npuscope cluster DIR` (threads)"),
                       ("mpi2", "`mpirun -np 2 npuscope cluster DIR`")):
        if key + "_s" not in data:
            continue
        s, rss = data[key + "_s"], data[key + "_rss_mib"]
        ok_s, ok_m = s <= CLUSTER_TARGET_S, rss <= CLUSTER_TARGET_MIB
        if not (ok_s and ok_m):
            warn("cluster: %s took %.1f s and %.0f MiB (targets %g s, %g MiB)" % (key, s, rss, CLUSTER_TARGET_S,
                                                                             CLUSTER_TARGET_MIB))
        out.append("| %s | %.1f s | <= %g s (%s) | %.0f MiB | <= %g MiB (%s) | %s |" % (
            label, s, CLUSTER_TARGET_S, verdict(ok_s, "ABOVE"), rss, CLUSTER_TARGET_MIB, verdict(ok_m, "ABOVE"),
            ", ".join(str(r) for r in data.get(key + "_slow_ranks", [])) or "none"))
    if "real_run_s" in data:
        named = data.get("real_slow_ranks", [])
        out += ["", "%d real ranks of `samples/mpi_data_parallel` (10 steps, rank %d slowed 1.5x, the device-bound "
                "spec) under `mpirun --oversubscribe -np %d npuscope run -o rank_%%r.db` on %d cores: %.1f s end to "
                "end; `npuscope cluster` on their traces %.2f s, %.0f MiB, named %s (%s)." % (
                    data["real_ranks"], data["real_slowed_rank"], data["real_ranks"], data["cores"],
                    data["real_run_s"], data["real_cluster_s"], data["real_cluster_rss_mib"],
                    ", ".join("rank %d" % r for r in named) or "no rank",
                    verdict(named == [data["real_slowed_rank"]], "WRONG"))]
    out += ["", "Command: `/usr/bin/python3 bench/cluster_bench.py BUILD` (JSON on stdout)."]
    return out


IMPORT_TARGET_RATIO = 5.0
IMPORT_TARGET_RSS_MIB = 1024


def import_section(out_dir):
    # import.json, not *_bench.json: those names are Google Benchmark runs (load_runs).
    data = load_json_tail(os.path.join(out_dir, "import.json"))
    if data is None or not data.get("available"):
        return []
    ok = data["ratio"] >= IMPORT_TARGET_RATIO
    if not ok:
        warn("import: %.1fx Python's json.load (target %gx)" % (data["ratio"], IMPORT_TARGET_RATIO))
    out = ["", "## Importing real traces", "",
           "`npuscope import` of the biggest real Kineto trace in shared/realdata (`%s`, %.1f MB of JSON) against "
           "/usr/bin/python3's `json.load` of the same file, median of runs alternated in one bench run; MB of JSON "
           "per CPU second (user + sys, per core)." % (data["trace"], data["mb"]), "",
           "| reader | MB/s per core | |", "|---|---:|---|",
           "| `npuscope import` (parse, map, trace written) | %.0f | %.1fx json.load (target >= %gx: %s) |" % (
               data["npuscope_mb_s"], data["ratio"], IMPORT_TARGET_RATIO, verdict(ok)),
           "| its JSON reading alone (`bench/read_chrome_events`) | %.0f | %.1fx json.load |" % (
               data["read_mb_s"], data["read_ratio"]),
           "| Python `json.load` (parse only) | %.0f | |" % data["python_mb_s"]]
    if data.get("synthetic"):
        out += ["", "Synthetic traces made by repeating its events, shifted in time and ids (`bench/make_kineto_trace`, "
                "streamed), imported one by one: peak RSS (`wait4`). All that grows with the trace is the index "
                "the device tasks join their host op through, 8 bytes a host op (Note [Kineto import]); wall "
                "times on a machine shared with other jobs.", "",
                "| trace | wall | MB/s per core | peak RSS | target |", "|---:|---:|---:|---:|---|"]
        for row in data["synthetic"]:
            ok_m = row["rss_mib"] <= IMPORT_TARGET_RSS_MIB
            if not ok_m:
                warn("import: %.1f GB took %.0f MiB" % (row["gb"], row["rss_mib"]))
            out.append("| %.2f GB | %.1f s | %.0f | %.0f MiB | <= %d MiB (%s) |" % (
                row["gb"], row["wall_s"], row["mb_s"], row["rss_mib"], IMPORT_TARGET_RSS_MIB,
                verdict(ok_m, "ABOVE")))
    out += ["", "Command: `/usr/bin/python3 bench/import_bench.py BUILD [--big]` (JSON on stdout)."]
    return out


def export_section(runs):
    cases = [(find(runs, "ExportPerfetto"), "Perfetto protobuf (`--perfetto`)"),
             (find(runs, "ExportChrome"), "Chrome JSON (`--chrome`)")]
    cases = [(r, label) for r, label in cases if r and "rows_per_second" in r["counters"]]
    if not cases:
        return []
    out = ["", "## Timeline exports", "",
           "`npuscope export` of one trace of 500k tasks on 2 streams, each launched by an API call inside a "
           "PyTorch op (1.5M slices, with the flows from each call and, in Perfetto's, from each op to its task), "
           "read from the trace store and written as a stream (median of 3, wall time). Both exports hold a few "
           "MiB whatever the trace's size (their LargeTraceStreamsInBoundedMemory tests check it).", "",
           "| export | rows/s | bytes per row | file |", "|---|---:|---:|---:|"]
    for r, label in cases:
        c = r["counters"]
        out.append("| %s | %.2f M | %.0f | %.0f MB |" % (
            label, c["rows_per_second"] / 1e6, c["bytes_per_row"], c["bytes_per_row"] * 1.5e6 / 1e6))
    if len(cases) == 2:
        perfetto, chrome = cases[0][0]["counters"], cases[1][0]["counters"]
        out += ["", "Perfetto's file is **%.1fx smaller** than the Chrome JSON of the same trace, written at %.2fx its "
                "rate." % (chrome["bytes_per_row"] / perfetto["bytes_per_row"],
                           perfetto["rows_per_second"] / chrome["rows_per_second"])]
    out += ["", "Command: `BUILD/bench/export_bench`."]
    return out


# Tensor mode compares at 1 GB/s end to end (issue 38): the .pt reading alone must leave room for it.
TORCH_PT_TARGET_GB_S = 1.0


def torch_pt_section(out_dir):
    data = load_json_tail(os.path.join(out_dir, "torch_pt.json"))
    if data is None or not data.get("available"):
        return []
    out = ["", "## Reading .pt tensor files", "",
           "`read_torch_pt` (importer/src/torch_pt_file.h: what `npuscope compare` reads msprobe's tensor-mode "
           "`dump_tensor_data/*.pt` with, no Python, no libtorch) against /usr/bin/python3's `torch.load` (torch %s, "
           "`.contiguous()` after) of the same %d MB float32 tensor written by `torch.save`, the file in the page "
           "cache; median CPU time (user + sys) of %d reads each, in one process each (interpreter start and "
           "`import torch` not counted)." % (data["torch"], data["mb"], data["runs"]), "",
           "| file | read_torch_pt | torch.load | ratio | target |", "|---|---:|---:|---:|---|"]
    for f in data["files"]:
        # Judged: the contiguous file, what msprobe writes (it saves tensor.clone().contiguous()).
        target = ""
        if f["name"] == "contiguous":
            ok = f["read_gb_s"] >= TORCH_PT_TARGET_GB_S
            if not ok:
                warn("torch_pt: %.2f GB/s reading a contiguous .pt (target %g)" % (f["read_gb_s"], TORCH_PT_TARGET_GB_S))
            target = ">= %g GB/s (%s)" % (TORCH_PT_TARGET_GB_S, verdict(ok))
        what = "contiguous (msprobe's case: one read)" if f["name"] == "contiguous" else "transposed view (gathered)"
        out.append("| %s | %.2f GB/s | %.2f GB/s | %.1fx | %s |" % (
            what, f["read_gb_s"], f["torch_gb_s"], f["ratio"], target))
    out += ["", "Command: `/usr/bin/python3 bench/torch_pt_bench.py BUILD [--mb 256]` (JSON on stdout)."]
    return out


# Issue 38: a statistics dump of 100,000 entries compared in under 2 s (the whole `npuscope compare`
# a user waits for), tensor mode end to end at >= 1 GB/s of tensor data (one side's) per CPU second.
DUMP_STATS_TARGET_S = 2.0
DUMP_TENSOR_TARGET_GB_S = 1.0


def compare_dumps_section(runs, out_dir):
    data = load_json_tail(os.path.join(out_dir, "compare_dumps.json"))
    if data is None or "statistics" not in data:
        return []
    s = data["statistics"]
    ok_s = s["npuscope_wall_s"] <= DUMP_STATS_TARGET_S
    if not ok_s:
        warn("compare_dumps: %d entries compared in %.2f s (target %g s)" % (
            s["entries"], s["npuscope_wall_s"], DUMP_STATS_TARGET_S))
    out = ["", "## Comparing msprobe dumps", "",
           "`npuscope compare NPU BENCH --format csv -o DIR` of two msprobe dumps, the whole process a user runs "
           "(reading both dumps, one thread each; comparing, a big tensor pair's two files read on two threads; "
           "writing compare_result.csv, its rows formatted on two threads, and the other tables), "
           "against the Python reference of the same work in one /usr/bin/python3 process (interpreter start and "
           "imports not counted): `json.load`, then per value msprobe's statistics cells and checkers, or "
           "`torch.load` of both .pt files and msprobe's metrics in numpy (npy_compare.py), each row written "
           "to a CSV. Median of %d runs, alternated; CPU = user + sys. Load average at the start: %s." % (
               data.get("runs", 3), ", ".join("%.2f" % x for x in data.get("load_avg", []))), "",
           "| case | npuscope wall | npuscope CPU | Python wall | Python CPU | CPU ratio | target |",
           "|---|---:|---:|---:|---:|---:|---|",
           "| statistics: %s entries (2 x %.0f MB of dump.json), %s compare_result rows | **%.2f s** | %.2f s | "
           "%.2f s | %.2f s | %.1fx | wall <= %g s (%s) |" % (
               "{:,}".format(s["entries"]), s["json_mb"] / 2, "{:,}".format(s["rows"]), s["npuscope_wall_s"],
               s["npuscope_cpu_s"], s["python_wall_s"], s["python_cpu_s"], s["speedup_cpu"], DUMP_STATS_TARGET_S,
               verdict(ok_s, "ABOVE"))]
    t = data.get("tensor")
    if t:
        ok_t = t["npuscope_gb_per_cpu_s"] >= DUMP_TENSOR_TARGET_GB_S
        if not ok_t:
            warn("compare_dumps: tensor mode at %.2f GB/s per CPU second (target %g)" % (
                t["npuscope_gb_per_cpu_s"], DUMP_TENSOR_TARGET_GB_S))
        out.append("| tensor: %d MB of float32 .pt a side (%d tensors of 16 MB), the files in the page cache | "
                   "%.2f s (%.2f GB/s) | %.2f s (**%.2f GB/s**) | %.2f s | %.2f s (%.2f GB/s) | %.1fx | "
                   ">= %g GB/s of one side's data per CPU s (%s) |" % (
                       t["mb_per_side"], t["tensors_per_side"], t["npuscope_wall_s"], t["npuscope_gb_per_wall_s"],
                       t["npuscope_cpu_s"], t["npuscope_gb_per_cpu_s"], t["python_wall_s"], t["python_cpu_s"],
                       t["python_gb_per_cpu_s"], t["speedup_cpu"], DUMP_TENSOR_TARGET_GB_S, verdict(ok_t)))
    in_memory = find(runs, "CompareDumps/")
    if in_memory:
        out += ["", "`comparator::compare_dumps()` alone on the statistics case's dumps in memory "
                "(`BUILD/bench/compare_dumps_bench`, %s): %.0f ms." % (
                    in_memory["name"], to_seconds(in_memory["ms"], in_memory["unit"]) * 1000)]
    out += ["", "Command: `/usr/bin/python3 bench/compare_dumps_bench.py BUILD [--entries 100000] [--tensor-mb 1024]` "
            "(JSON on stdout)."]
    return out


ZOO_TARGET_MEDIAN = 1.5
ZOO_TARGET_WORST = 3.0


def zoo_row(r, with_base):
    base = " |" if with_base else ""
    if "unsupported" in r:
        return "| %s | %s | | | | | |%s unsupported: %s |" % (r["model"], r.get("params_m", ""), base,
                                                           r["unsupported"].replace("|", "/"))
    if with_base:
        base = " %.2fx / %.2fx |" % (r["cpu_base_ratio"], r["npu_base_ratio"])
    return "| %s | %.1f | %.2f | %.2f | %.2f | **%.2fx** | **%.2fx** |%s %.6f / %.5f |" % (
        r["model"], r["params_m"], r["torch_ms"], r["cpu_ms"], r["npu_ms"], r["cpu_ratio"], r["npu_ratio"], base,
        r["cos_cpu"], r["cos_npu"])


def zoo_section(out_dir):
    # model_zoo.json, not *_bench.json: those names are Google Benchmark runs (load_runs).
    data = load_json_tail(os.path.join(out_dir, "model_zoo.json"))
    if data is None or not data.get("available", False):
        return []
    with_base = any("cpu_base_ratio" in r for r in data["rows"])
    out = ["", "## Model zoo: the emulator against PyTorch's own forward", "",
           "Each model with random weights (seed 0), batch 1, exported with `torch.onnx.export` (torch %s) and "
           "run by the emulator on `cpu` (the golden kernels) and on `npu` (the emulated device with the default spec "
           "and precision mode, whose cube keeps f32; the stream drained at the end of each pass), against PyTorch's CPU forward (eval, no_grad, "
           "the faster of %d and 1 intra-op threads; ours with as many OpenMP threads for its BLAS), in one run: "
           "the median of >= %.1f s of passes each, %d "
           "round(s), process start-up and model loading not timed. The ratio is ours / PyTorch's; the last "
           "column is the cosine similarity of our outputs with PyTorch's (cpu / npu).%s Whole bench %.0f s, load "
           "average %.1f at the end." % (data["torch"], data["nproc"], data["min_time_s"], data["rounds"],
                                         (" \"before\" is the ratio of %s, timed right after ours (`--baseline-exec`)."
                                          % data["baseline"]) if with_base else "",
                                         data["seconds"], data["load_avg"][0]), "",
           "| model | params (M) | PyTorch ms | cpu ms | npu ms | cpu / PyTorch | npu / PyTorch |%s cosine |" % (
               " before (cpu / npu) |" if with_base else ""),
           "|---|---:|---:|---:|---:|---:|---:|%s---|" % ("---:|" if with_base else "")]
    out += [zoo_row(r, with_base) for r in data["rows"]]
    out.append("")
    for dev in ("cpu", "npu"):
        s = data["summary"].get(dev)
        if s is None:
            continue
        ok_med, ok_worst = s["median_ratio"] <= ZOO_TARGET_MEDIAN, s["worst_ratio"] <= ZOO_TARGET_WORST
        if not (ok_med and ok_worst):
            warn("model zoo on %s: median %.2fx, worst %.2fx (%s) (targets %gx, %gx)" % (
                dev, s["median_ratio"], s["worst_ratio"], s["worst_model"], ZOO_TARGET_MEDIAN, ZOO_TARGET_WORST))
        out.append("- `%s`: median %.2fx (target <= %gx: %s), worst %.2fx on %s (target <= %gx: %s)." % (
            dev, s["median_ratio"], ZOO_TARGET_MEDIAN, verdict(ok_med, "ABOVE"), s["worst_ratio"], s["worst_model"],
            ZOO_TARGET_WORST, verdict(ok_worst, "ABOVE")))
    out += ["", "On a small shared machine the times move by up to 2-3x from run to run (OpenMP teams on busy cores "
            "most of all): compare the ratios within one run.",
            "", "Command: `/usr/bin/python3 bench/model_zoo.py --zoo-exec BUILD/bench/zoo_exec --out OUT_DIR` "
            "(`bash bench/run_bench.sh` runs it)."]
    return out


HOT_PATH_TARGET_NS = 25.0
HOT_PATH_BENCHES = (("BM_ApiEvent/", "API enter or exit (`on_api`)", True),
                    ("BM_TaskEvents/", "task event (`on_task`: queued, begin, end), per call", True),
                    ("BM_MarkerEvent/", "marker push or pop (`on_marker`)", True),
                    ("BM_ApiEventCold/", "API event into fresh memory, 2^20 in a row (page faults)", False))


def hot_path_section(runs):
    rows = found_cases(runs, HOT_PATH_BENCHES, "ns_per_event")
    if not rows:
        return []
    out = ["", "## Profiler hot path", "",
           "Wall nanoseconds per recorded event: the injection library's subscriber callbacks called directly from "
           "one thread while its drain thread writes SQLite beside it (median of 5 repetitions of 16 bursts of "
           "32768 calls, the drain thread catching up between bursts; no event dropped). "
           "Target: <= %g ns per event (lower is better)." % HOT_PATH_TARGET_NS, "",
           "| event | ns per event | target |", "|---|---:|---|"]
    for r, label, judged in rows:
        ns = r["counters"]["ns_per_event"]
        if judged:
            ok = ns <= HOT_PATH_TARGET_NS
            out.append("| %s | **%.1f** | <= %g (%s) |" % (label, ns, HOT_PATH_TARGET_NS, verdict(ok, "ABOVE")))
            if not ok:
                warn("profiler hot path: %s takes %.1f ns per event (target <= %g)" % (label, ns, HOT_PATH_TARGET_NS))
        else:
            out.append("| %s | %.1f | (not judged: a burst longer than the drain thread's pace) |" % (label, ns))
    out += ["", "Command: `BUILD/bench/inject_bench` (counter `ns_per_event`)."]
    drain = find(runs, "BM_DrainPerOp/")
    if drain and "drain_ns_per_op" in drain["counters"]:
        c = drain["counters"]
        out += ["", "The drain thread beside it: CPU nanoseconds it spends per launched op (an API call, a task and "
                "an allocation and free: 4 records) turning the records into rows and writing them to the spool, "
                "as under `npuscope run`; the kernel's part of the writes included (lower is better; not judged: "
                "on a machine without a spare core it is part of the end-to-end overhead below).", "",
                "| drain thread | CPU ns per op | CPU ns per record |", "|---|---:|---:|",
                "| records -> spool rows -> write(2) | %.0f | %.0f |" % (c["drain_ns_per_op"],
                                                                        c["drain_ns_per_record"]),
                "", "Command: `BUILD/bench/drain_bench` (counters `drain_ns_per_op`, `drain_ns_per_record`)."]
    return out


TRACE_WRITER_TARGET = 3e6
# Issue 40's targets: analyze of 10M tasks <= 5 s and 1.5 GB, the viewer's load of them <= 3 s.
ANALYZE_SECONDS_TARGET = 5.0
ANALYZE_RSS_MB_TARGET = 1500.0
DIFF_SECONDS_TARGET = 20.0
DIFF_RSS_MB_TARGET = 2048.0
VIEWER_LOAD_SECONDS = 3.0
VIEWER_BYTES_PER_TASK = 48.0
VIEWER_FRAME_MS = 16.0


def dispatch_section(runs, context):
    one = find(runs, "DispatchTinyAdd/real_time/threads:1")
    four = find(runs, "DispatchTinyAdd/real_time/threads:4")
    if not (one and four):
        return []
    a, b = one["counters"].get("items_per_second"), four["counters"].get("items_per_second")
    if not (a and b):
        return []
    return ["", "## Dispatch scaling (unprofiled)", "",
            "Tiny Adds launched from 1 and 4 host threads on %s CPUs (the device worker runs beside them):" %
            context.get("num_cpus", "?"), "",
            "| host threads | ops/s |", "|---:|---:|",
            "| 1 | %.0f |" % a, "| 4 | %.0f |" % b, "",
            "4 threads / 1 thread = **%.2fx**." % (b / a)]


def trace_writer_row(r, span, mode):
    c = r["counters"]
    judged = "**%.2f M**" if span == 1024 and mode == "WAL" else "%.2f M"
    return ("| %s | %d | %.2f M | " + judged + " | %.2f M | %.0f ms | %.1f |") % (
        mode, span, c["add_rows_per_second"] / 1e6, c["add_cpu_rows_per_second"] / 1e6,
        c["rows_per_second"] / 1e6, c["finalize_ms"], c["bytes_per_row"])


def trace_writer_section(runs):
    spans = [(find(runs, "TraceWriterTasks/%d/" % span), span, "WAL") for span in (1024, 1)]
    spans.append((find(runs, "TraceWriterTasksFromSpool/1024/"), 1024, "no journal (spool conversion)"))
    spans = [(r, span, mode) for r, span, mode in spans if r and "add_cpu_rows_per_second" in r["counters"]]
    if not spans:
        return []
    out = ["", "## Trace writer", "",
           "1M task rows (no tensors) through `TraceWriter::add`, SPAN rows per call (1024: what the drain "
           "thread hands over; 1: the worst case), into a fresh file. *add wall* = rows / wall time of the "
           "`add` calls (commits included); *add CPU* = rows / CPU seconds of those calls; *incl. finalize* = "
           "rows / the whole time from `create()` to `finalize()` (index builds, WAL checkpoint); bytes per row = final file size / rows (TASK rows with "
           "their indexes). *WAL* is the writer the injection library uses in the process (no `npuscope run`); "
           "*no journal* the one `npuscope run` converts the spool with (Note [Trace spool]).", "",
           "| journal | SPAN | add wall rows/s | add CPU rows/s | incl. finalize rows/s | finalize | bytes per row |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    out += [trace_writer_row(r, span, mode) for r, span, mode in spans]
    main = dict((span, r) for r, span, mode in spans if mode == "WAL").get(1024)
    if main:
        rate = main["counters"]["add_cpu_rows_per_second"]
        ok = rate >= TRACE_WRITER_TARGET
        out += ["", "Judged: the per-CPU-second add rate at SPAN 1024, **%.2f M rows/s** (%s the target of >= %g M "
                "rows/s); wall time on this shared 2-core machine varies by about 2x from run to run, so the wall "
                "rate (%.2f M rows/s here) is reported but not judged. On disk a task row takes **%.1f bytes**." % (
                    rate / 1e6, verdict(ok), TRACE_WRITER_TARGET / 1e6,
                    main["counters"]["add_rows_per_second"] / 1e6, main["counters"]["bytes_per_row"])]
        if not ok:
            warn("trace writer sustains %.2f M task rows per CPU second (target >= 3 M)" % (rate / 1e6))
    out += ["", "Command: `BUILD/bench/trace_writer_bench`."]
    return out


def big_trace_section(runs, prefix, intro, columns, cells, judged_what, seconds_target, rss_mb_target, command):
    """A section of a bench that reads synthetic traces of N tasks (bench/synthetic_trace.h): a row of `cells(tasks,
    seconds, counters)` per N, and the verdict on 10M tasks against the time and peak-RSS targets."""
    rows = [r for r in runs if r["name"].startswith(prefix + "/")]
    if not rows:
        return []
    out = intro + ["| " + " | ".join(columns) + " |", "|" + "---:|" * len(columns)]
    judged = None
    for r in sorted(rows, key=lambda r: int(r["name"].split("/")[1])):
        tasks = int(r["name"].split("/")[1])
        seconds = to_seconds(r["ms"], r["unit"])
        out.append("| " + " | ".join(cells(tasks, seconds, r["counters"])) + " |")
        if tasks == 10_000_000:
            judged = (seconds, r["counters"]["peak_rss_mb"])
    if judged:
        ok = judged[0] <= seconds_target and judged[1] <= rss_mb_target
        out += ["", "Judged: %s in **%.2f s** with **%.0f MB** peak RSS (%s the target of <= %g s and <= 2 GB)." % (
            judged_what, judged[0], judged[1], verdict(ok, "MISSES"), seconds_target)]
        if not ok:
            warn("%s took %.2f s and %.0f MB (target <= %g s, <= %g MB)" % (
                judged_what, judged[0], judged[1], seconds_target, rss_mb_target))
    return out + ["", "Command: `%s`." % command]


def diff_section(runs):
    intro = ["", "## Diff", "",
             "`npuscope diff` (`analyzer::diff()`) of two synthetic traces of the analyzer section's kind: BASE, and "
             "NEW with op 7 3 us slower and the ops of one type fallen back to the AI CPU (4x). Time from opening both "
             "traces to the report (both read at once, one thread each; median of 3); peak RSS of the process "
             "(`getrusage`).", ""]
    return big_trace_section(
        runs, "Diff", intro, ["tasks per trace", "time", "tasks/s (both)", "peak RSS", "pairs"],
        lambda tasks, seconds, c: ["{:,}".format(tasks), "%.2f s" % seconds, "%.2f M" % (2 * tasks / seconds / 1e6),
                                   "%.0f MB" % c["peak_rss_mb"], "{:,}".format(int(c["pairs"]))],
        "two 10M-task traces", DIFF_SECONDS_TARGET, DIFF_RSS_MB_TARGET, "BUILD/bench/diff_bench")


def to_seconds(value, unit):
    return value * {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[unit]


def analyzer_section(runs):
    intro = ["", "## Analyzer", "",
             "`npuscope analyze` with every rule (`analyzer::analyze()`) on a synthetic trace written through the "
             "real `TraceWriter`: two streams on one ascend910b-like device, 300 op names of 40 types, an API call "
             "per task on two host threads, a synchronization every 1000 tasks, an alloc/free pair every 100, a small "
             "copy every 500. Time from opening the trace to the report (median of 3); peak RSS of the process "
             "(`getrusage`; the writer that made the trace holds only its 16 MiB cache).", ""]
    return big_trace_section(
        runs, "Analyze", intro, ["tasks", "time", "tasks/s", "peak RSS", "trace file"],
        lambda tasks, seconds, c: ["{:,}".format(tasks), "%.2f s" % seconds, "%.2f M" % (tasks / seconds / 1e6),
                                   "%.0f MB" % c["peak_rss_mb"], "%.0f MB" % c["trace_mb"]],
        "10M tasks", ANALYZE_SECONDS_TARGET, ANALYZE_RSS_MB_TARGET, "BUILD/bench/analyze_bench")


COMPARE_TARGET_BYTES = 1e9  # bytes of ONE side's f32 data per CPU second (250M element pairs/s)
COMPARE_CASES = (("CompareTensors/f32_f32/", "f32 NPU vs f32 golden", True),
                 ("CompareTensors/f16_f32/", "f16 NPU vs f32 golden", False),
                 ("CompareTensors/bf16_f32/", "bf16 NPU vs f32 golden", False),
                 ("CompareTensors/f32_f64/", "f32 NPU vs f64 golden (the f64 kernel)", False),
                 ("CompareTensors/f32_f32_nan/", "f32 vs f32, a matched NaN every 65536 elements", False))


def comparator_section(runs):
    rows = found_cases(runs, COMPARE_CASES, "bytes_per_second")
    if not rows:
        return []
    elements = rows[0][0]["name"].split("/")[2]
    out = ["", "## Comparator", "",
           "`comparator::compare_tensors()`: every msprobe metric (cosine, max abs/rel error, the two error ratios, "
           "RMSE, Euclidean and relative Euclidean distance), the NaN/Inf check and the allclose count for one pair "
           "of %s-element tensors, golden ~ N(0, 1), NPU = golden with a relative noise of ~1e-4 rounded to its "
           "dtype. Rates per CPU second of the one thread (median of 3): *one side* counts the bytes of the NPU "
           "tensor only, *both sides* those of the two. Target: >= %g GB/s of f32 data (one side) per core, i.e. "
           "250M element pairs/s." % ("{:,}".format(int(elements)), COMPARE_TARGET_BYTES / 1e9), "",
           "| case | CPU time per compare | one side | both sides | element pairs/s | target |",
           "|---|---:|---:|---:|---:|---|"]
    for r, label, judged in rows:
        c = r["counters"]
        rate = c["bytes_per_second"]
        target = ""
        if judged:
            ok = rate >= COMPARE_TARGET_BYTES
            target = ">= %g GB/s (%s)" % (COMPARE_TARGET_BYTES / 1e9, verdict(ok))
            if not ok:
                warn("compare_tensors reads %.2f GB/s of f32 data per core (target >= 1 GB/s)" % (rate / 1e9))
        out.append("| %s | %.1f %s | %s%.2f GB/s%s | %.2f GB/s | %.0f M | %s |" % (
            label, c.get("cpu_time", r["ms"]), r["unit"], "**" if judged else "", rate / 1e9, "**" if judged else "",
            c["both_sides_bytes_per_second"] / 1e9, c["elements_per_second"] / 1e6, target))
    end_to_end = find(runs, "CompareTraces/")
    if end_to_end:
        ops = int(end_to_end["name"].split("/")[1])
        out += ["", "End to end, `comparator::compare_traces()` on two traces of %d ops with one f32 input and one f32 "
                "output of 1M elements each, dumped as `npuscope run --dump tensor` does (zstd level 1): reading the "
                "blobs from SQLite, decompressing and the metrics, one thread: **%.2f GB/s** of one side's f32 data "
                "(msprobe compare: 0.1-0.3 GB/s, REFERENCE.md)." % (ops, end_to_end["counters"]["bytes_per_second"] / 1e9)]
    out += ["", "Commands: `BUILD/bench/compare_bench`, `BUILD/bench/compare_traces_bench`."]
    return out


def viewer_section(runs):
    rows = [r for r in runs if r["name"].startswith("ViewerLoad/")]
    if not rows:
        return []
    out = ["", "## Viewer", "",
           "Loading the timeline (`viewer::TimelineModel`) of the synthetic trace of the analyzer section: the tasks "
           "alone, and with an API call per task plus the memory records and copies. Time from opening the trace "
           "to the lanes ready (median of 3); memory = the lanes' capacity / tasks (24-byte items, Note [Timeline "
           "model]). Targets: 10M tasks in <= %g s, <= %g bytes per task." % (VIEWER_LOAD_SECONDS, VIEWER_BYTES_PER_TASK), "",
           "| tasks | host API calls | load | bytes per task | peak RSS | target |",
           "|---:|---|---:|---:|---:|---|"]
    for r in sorted(rows, key=lambda r: r["name"]):
        _, tasks, host = r["name"].split("/")[:3]
        seconds = to_seconds(r["ms"], r["unit"])
        c = r["counters"]
        ok = seconds <= VIEWER_LOAD_SECONDS and c["bytes_per_task"] <= VIEWER_BYTES_PER_TASK
        out.append("| %s | %s | **%.2f s** | **%.1f** | %.0f MB | %s |" % (
            "{:,}".format(int(tasks)), "one per task" if host == "1" else "none", seconds, c["bytes_per_task"],
            c["peak_rss_mb"], verdict(ok, "MISSES")))
        if not ok:
            warn("viewer load of %s tasks (%s): %.2f s, %.1f bytes per task (target <= %g s, <= %g)" % (
                tasks, "with API calls" if host == "1" else "tasks only", seconds, c["bytes_per_task"],
                VIEWER_LOAD_SECONDS, VIEWER_BYTES_PER_TASK))
    frames = [r for r in runs if r["name"].startswith("ViewerFrame/")]
    if frames:
        out += ["", "Frame time at 1280x800 under Xvfb with Mesa's llvmpipe (ImGui layout, every lane through the "
                "level of detail, panels, OpenGL draw, glFinish), median of 3, on the 10M-task trace with an API "
                "call per task. Target: <= %g ms." % VIEWER_FRAME_MS, "",
                "| view | frame time | items in view | items drawn | of which folded | target |",
                "|---|---:|---:|---:|---:|---|"]
        for r in sorted(frames, key=lambda r: r["name"]):
            zoom = r["name"].split("/")[2]
            ms = to_seconds(r["ms"], r["unit"]) * 1e3
            c = r["counters"]
            ok = ms <= VIEWER_FRAME_MS
            out.append("| %s | **%.1f ms** | %s | %.0f | %.0f | %s |" % (
                "fully zoomed out" if zoom == "0" else "mid zoom (1/1000 of the trace)", ms,
                "{:,}".format(int(c.get("items_in_view", 0))), c.get("items_drawn", 0), c.get("folded_items", 0),
                verdict(ok, "ABOVE")))
            if not ok:
                warn("viewer frame time %.1f ms (target <= %g ms)" % (ms, VIEWER_FRAME_MS))
    out += ["", "Commands: `BUILD/bench/viewer_load_bench`, `xvfb-run -a BUILD/bench/viewer_frame_bench`."]
    return out


def end_to_end_target(case):
    target = case.get("end_to_end_target")
    if not target:
        return ""
    return "<= %gx (%s)" % (target, verdict(case["end_to_end_ratio"] <= target, "ABOVE"))


def overhead_row(case):
    ok = case["ratio"] <= case["target"]
    return "| %s | %.3f s | %.3f s | **%.2fx** | <= %gx (%s) | %.3f s | %.3f s | **%.2fx** | %s | %.2fx | %.1f MiB |" % (
        case["label"], case["baseline_s"], case["program_s"], case["ratio"], case["target"],
        verdict(ok, "ABOVE"), case["ready_after_s"], case["profiled_s"], case["end_to_end_ratio"],
        end_to_end_target(case), case["cpu_ratio"], case["trace_bytes"] / 2**20)


VARIANT_LABELS = {"baseline": "unprofiled", "profiled": "`npuscope run --dump %s` (judged: the program)",
                  "spool_only": "injection library writing the spool, no CLI (`NPUSCOPE_SPOOL=...`), `--dump %s`",
                  "sqlite_in_process": "injection library writing SQLite in the process (`NPUSCOPE_OUTPUT=...`), "
                                       "`--dump %s`",
                  "dump_none": "`npuscope run --dump none` (the program)",
                  "dump_stats": "`npuscope run --dump stats` (the program)"}


def ms(value):
    return "%.0f ms" % value if value is not None else ""


def breakdown_rows(case):
    out = []
    for name, v in case["variants"].items():
        label = VARIANT_LABELS.get(name, name)
        label = label % case["dump"] if "%s" in label else label
        wall = v["program_s"] if v.get("program_s") is not None else v["wall_s"]
        rest = wall * 1e3 - v["loop_ms"] if v["loop_ms"] is not None else None
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            case["label"].split(",")[0], label, ms(wall * 1e3), ms(v["loop_ms"]), ms(rest),
            ms(v["ready_after_s"] * 1e3) if v.get("ready_after_s") is not None else "",
            "%.1f MiB" % (v["trace_bytes"] / 2**20) if v["trace_bytes"] else ""))
    return out


def attribution(case):
    """Where the judged variant's extra wall time goes: the change of the loop's median, and the rest
    (medians don't add, so the rest is the difference, not a median of its own)."""
    v = case["variants"]
    base, prof = v["baseline"], v["profiled"]
    if base["loop_ms"] is None or prof["loop_ms"] is None:
        return []
    program = (prof["program_s"] - base["wall_s"]) * 1e3
    loop = prof["loop_ms"] - base["loop_ms"]
    return ["- %s: the program %+.0f ms: about %+.0f ms inside the workload's loop (hook calls, the drain "
            "thread writing the spool beside it) and the rest, %+.0f ms, outside it (loading the injection "
            "library, and at exit the last records written to the spool); then %.0f ms until the trace was ready "
            "(the spool converted into SQLite, indexes built) and summarised." % (
                case["label"].split(",")[0], program, loop, program - loop,
                (prof["wall_s"] - prof["program_s"]) * 1e3)]


def overhead_breakdown(cases):
    if not any("spool_only" in c["variants"] for c in cases):
        return []
    out = ["", "Where the time goes (medians of the same alternating runs; *program* = the workload process, "
           "*loop* = its own `host: ... ms wall` line, *outside* = the rest of the process: start-up and exit; "
           "*ready after* = from the program's exit until the trace was written):", "",
           "| workload | variant | program | loop | outside | ready after | trace |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for case in cases:
        out += breakdown_rows(case)
    out.append("")
    for case in cases:
        out += attribution(case)
    return out


def overhead_section(out_dir):
    data = load_json_tail(os.path.join(out_dir, "profiler_overhead.json"))
    if not data or not data.get("cases"):
        return []
    out = ["", "## Profiling overhead, end to end", "",
           "Whole processes timed by `bench/profiler_overhead.py`: each workload unprofiled and under "
           "`npuscope run`, %d alternating runs of each after one warm-up; medians. The judged *ratio* is the "
           "workload's slowdown: the profiled program's wall time (fork to exit, as `npuscope run` reports it) over "
           "the unprofiled program's, as Nsight Systems and the PyTorch profiler quote their overhead. Under "
           "`npuscope run` the program writes a spool and the CLI converts it into the SQLite trace after the "
           "program exited (Note [Trace spool]; on a machine with 4 or more cores, while it runs): *trace ready* is "
           "that time, and the *end-to-end ratio* (judged too: the time to a ready trace) the whole `npuscope run` "
           "(conversion and summary included) over the unprofiled program (lower is better). CPU ratio = user + system CPU seconds of the process tree "
           "(informational). Load average at the end: %s." % (
               data["runs"], ", ".join("%.2f" % x for x in data.get("load_avg", []))),
           "", "| workload | unprofiled | profiled program | ratio | target | trace ready after exit | "
               "`npuscope run` until ready | end-to-end ratio | end-to-end target | CPU ratio | trace size |",
           "|---|---:|---:|---:|---|---:|---:|---:|---|---:|---:|"]
    out += [overhead_row(case) for case in data["cases"]]
    out += ["", "Commands (BUILD is the build directory, TMP a temporary directory):", ""]
    for case in data["cases"]:
        out += ["- %s: `%s` vs `%s`" % (case["label"], case["baseline_cmd"], case["profiled_cmd"])]
        if case["ratio"] > case["target"]:
            warn("profiling overhead of %s is %.2fx (target <= %gx)" % (case["label"], case["ratio"], case["target"]))
        if case.get("end_to_end_target") and case["end_to_end_ratio"] > case["end_to_end_target"]:
            warn("time to a ready trace of %s is %.2fx the unprofiled program (target <= %gx)" % (
                case["label"], case["end_to_end_ratio"], case["end_to_end_target"]))
    out += overhead_breakdown(data["cases"])
    out += ["", "Run it alone with `python3 bench/profiler_overhead.py BUILD` (JSON on stdout)."]
    return out


def machine_section(context, command):
    return ["", "## Machine", "",
            "- CPU: %s, %d logical cores (`nproc`)" % (cpu_model(), len(os.sched_getaffinity(0))),
            "- load average at the start: %s" % ", ".join("%.2f" % x for x in context.get("load_avg", [])),
            "- BLAS: %s" % context.get("openblas", "unknown"),
            "- F16C half conversions: %s" % context.get("f16c", "unknown"),
            "- date: %s" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "- command: `%s`" % command,
            ""]


def split_sections(lines):
    """[(heading or None for the text before the first section, its lines)], split at "## " headings."""
    sections = [(None, [])]
    for line in lines:
        if line.startswith("## "):
            sections.append((line, []))
        sections[-1][1].append(line)
    return sections


def update_report(report, lines):
    """--update: each "## " section of `lines` replaces the section of the same heading in REPORT (a new one
    goes before "## Machine"); the other sections of REPORT stay as they are."""
    with open(report) as f:
        old = split_sections(f.read().split("\n"))
    # A section's lines start with the blank line before its heading: the previous one's, once split.
    new = [(h, body + [""]) for h, body in split_sections(lines) if h is not None]
    headings = [h for h, _ in old]
    for heading, body in new:
        if heading in headings:
            old[headings.index(heading)] = (heading, body)
        else:
            at = headings.index("## Machine") if "## Machine" in headings else len(old)
            old.insert(at, (heading, body))
            headings.insert(at, heading)
    return [line for _, body in old for line in body]


def main(argv):
    update = "--update" in argv[1:]
    argv = [a for a in argv if a != "--update"]
    if len(argv) != 4:
        print("usage: report.py [--update] OUT_DIR REPORT.md COMMAND\n"
              "  --update: rewrite only the sections whose inputs are in OUT_DIR, keep the others of REPORT.md",
              file=sys.stderr)
        return 2
    out_dir, report, command = argv[1], argv[2], argv[3]
    runs, context = load_runs(out_dir)
    lines = [] if update else header_section(runs)
    lines += gemm_section(runs)
    lines += cost_model_section(runs)
    lines += opkit_section(runs)
    lines += resnet18_section(runs, out_dir)
    lines += torch_device_section(out_dir)
    lines += torch_small_models_section(out_dir)
    lines += torch_profile_section(out_dir)
    lines += hot_path_section(runs)
    lines += dispatch_section(runs, context)
    lines += trace_writer_section(runs)
    lines += analyzer_section(runs)
    lines += diff_section(runs)
    lines += viewer_section(runs)
    lines += comparator_section(runs)
    lines += overhead_section(out_dir)
    lines += cluster_section(out_dir)
    lines += import_section(out_dir)
    lines += export_section(runs)
    lines += torch_pt_section(out_dir)
    lines += compare_dumps_section(runs, out_dir)
    lines += zoo_section(out_dir)
    if update:
        lines = update_report(report, lines)
    else:
        lines += machine_section(context, command)
    os.makedirs(os.path.dirname(os.path.abspath(report)), exist_ok=True)
    with open(report, "w") as f:
        f.write("\n".join(lines))
    print("wrote " + report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
