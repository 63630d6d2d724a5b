#!/usr/bin/python3
"""The PyTorch device (npuscope.torch) against CPU PyTorch, side by side in one process (issue 16).

    PYTHONPATH=BUILD/python torch_device_bench.py [--loops 2000] [--repeats 7] [--warmup 2] [--steps 5]
                                                  [--threads N] [--skip-resnet]

1. Dispatch overhead of a tiny op: microseconds per op of `y = x + 1`, `x.add_(1)` and `torch.relu(x)` on
   a 16-element f32 tensor, on the device and on the CPU, timeit-style (LOOPS calls per timed loop,
   garbage collector off, the device synchronized at the end of each loop so that queued work is paid
   for), the median of REPEATS loops; the device and CPU loops alternate so that a noisy neighbour
   hits both. Target: device - CPU <= 20 us per op.
2. A ResNet-18 training step (torchvision resnet18, batch 8, 3x224x224, cross entropy, SGD with
   momentum, f32, precision mode must_keep_origin_dtype) from the same initial weights on the device
   and on the CPU: WARMUP steps, then the median of STEPS steps; loss.item() ends each step, so a
   device step includes waiting for its last kernel. CPU PyTorch runs with 1 and with nproc intra-op
   threads and the faster is the reference (as bench/torch_resnet18.py does). Target: device <= 2x CPU.
   The three run one after the other, not a step of each in turn: measured on 2 cores, CPU PyTorch's
   2-thread steps took 2x longer when device steps came between them, and 7x longer between 1-thread
   steps, while each alone, or first, matched a process of its own (thread pools tuned to one thread
   count and one caller, OpenMP's and OpenBLAS's, lose that at each switch).
   "device_host_ms" is the part of a device step before loss.item() (the host queueing the ops), the
   rest is the wait for the device worker to finish them.

Prints one JSON object; "others_cpu_share" is the share of the machine's CPU time that other
processes used meanwhile (from /proc/stat), to tell an idle machine's figures from a busy one's.
Without torch or the built package (npuscope.torch on PYTHONPATH) it prints {"available": false, ...}
and exits 0, so that bench/run_bench.sh can say so; without torchvision only the ResNet-18 part does.
"""
import argparse
import copy
import gc
import json
import os
import statistics
import sys
import time

ELEMENTS = 16
DISPATCH_TARGET_US = 20.0
RESNET_TARGET_RATIO = 2.0
TINY_OPS = (("y = x + 1", lambda torch, x: x + 1),
            ("x.add_(1)", lambda torch, x: x.add_(1)),
            ("torch.relu(x)", lambda torch, x: torch.relu(x)))


def busy_seconds():
    """(CPU seconds the whole machine was busy, CPU seconds of this process) so far: their difference over
    a run is what other processes took from it."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(v) for v in f.readline().split()[1:9]]  # user nice system idle iowait irq softirq steal
        machine = (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        machine = float("nan")
    own = os.times()
    return machine, own.user + own.system


def loop_us(fn, x, loops, sync):
    """Microseconds per call of fn(x) over `loops` calls, sync() included (timeit's way: gc off)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(loops):
            fn(x)
        sync()
        return (time.perf_counter() - start) / loops * 1e6
    finally:
        if was_enabled:
            gc.enable()


def dispatch(torch, npu, loops, repeats):
    dev = npu.device()
    rows = []
    for label, op in TINY_OPS:
        fn = lambda x, op=op: op(torch, x)  # noqa: E731
        x_cpu = torch.zeros(ELEMENTS)
        x_dev = x_cpu.to(dev)
        loop_us(fn, x_cpu, loops // 10, lambda: None)  # warm-up: first calls allocate, cache kernels
        loop_us(fn, x_dev, loops // 10, npu.synchronize)
        cpu, device = [], []
        for _ in range(repeats):
            cpu.append(loop_us(fn, x_cpu, loops, lambda: None))
            device.append(loop_us(fn, x_dev, loops, npu.synchronize))
        c, d = statistics.median(cpu), statistics.median(device)
        rows.append({"op": label, "cpu_us": c, "device_us": d, "overhead_us": d - c, "ratio": d / c})
    return {"elements": ELEMENTS, "dtype": "float32", "loops": loops, "repeats": repeats,
            "target_overhead_us": DISPATCH_TARGET_US, "ops": rows,
            "met": all(r["overhead_us"] <= DISPATCH_TARGET_US for r in rows)}


def train_steps(torch, model, x, y, warmup, steps):
    """Median step time (ms) and median time before loss.item() (ms) of `steps` steps after `warmup`."""
    opt = torch.optim.SGD(model.parameters(), lr=2e-4, momentum=0.9)
    total, host = [], []
    for _ in range(warmup + steps):
        start = time.perf_counter()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        queued = time.perf_counter()
        loss.item()
        end = time.perf_counter()
        total.append((end - start) * 1e3)
        host.append((queued - start) * 1e3)
    return statistics.median(total[warmup:]), statistics.median(host[warmup:])


def resnet18_train(torch, npu, warmup, steps, threads):
    try:
        import torchvision
    except ImportError as e:
        return {"available": False, "error": str(e)}
    npu.set_precision_mode("must_keep_origin_dtype")
    torch.manual_seed(0)
    model = torchvision.models.resnet18().train()
    x = torch.randn(8, 3, 224, 224)
    y = torch.randint(0, 1000, (8,))
    cpu_by_threads = {}
    for n in sorted({threads, 1}, reverse=True):
        torch.set_num_threads(n)
        cpu_by_threads[n] = train_steps(torch, copy.deepcopy(model), x, y, warmup, steps)[0]
    torch.set_num_threads(threads)
    best = min(cpu_by_threads, key=cpu_by_threads.get)
    npu.reset_fallback_ops()
    dev = npu.device()
    device_ms, host_ms = train_steps(torch, copy.deepcopy(model).to(dev), x.to(dev), y.to(dev), warmup, steps)
    ratio = device_ms / cpu_by_threads[best]
    return {"available": True, "batch": 8, "image": [224, 224], "optimizer": "SGD(momentum=0.9)",
            "precision_mode": npu.get_precision_mode(), "warmup": warmup, "steps": steps,
            "cpu_ms": cpu_by_threads[best], "cpu_threads": best,
            "cpu_ms_by_threads": {str(n): ms for n, ms in cpu_by_threads.items()},
            "device_ms": device_ms, "device_host_ms": host_ms, "ratio": ratio,
            "target_ratio": RESNET_TARGET_RATIO, "met": ratio <= RESNET_TARGET_RATIO,
            "fallback_ops": npu.fallback_ops()}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=2000, help="calls per timed loop of a tiny op (default 2000)")
    parser.add_argument("--repeats", type=int, default=7, help="timed loops per tiny op and device (default 7)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed ResNet-18 steps first (default 2)")
    parser.add_argument("--steps", type=int, default=5, help="timed ResNet-18 steps (default 5)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="CPU PyTorch intra-op threads to try besides 1 (default nproc)")
    parser.add_argument("--skip-resnet", action="store_true", help="only the tiny-op dispatch figures")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError as e:
        print(json.dumps({"available": False, "error": str(e)}))
        return 0
    try:
        import npuscope.torch as npu
    except (ImportError, OSError, RuntimeError) as e:  # not built, not on PYTHONPATH, or fails to load
        print(json.dumps({"available": False, "torch": torch.__version__, "error": str(e)}))
        return 0
    result = {"available": True, "torch": torch.__version__, "device": str(npu.device()),
              "load_avg": list(os.getloadavg()),
              "omp_env": {k: v for k, v in os.environ.items() if k.startswith(("OMP_", "GOMP_", "OPENBLAS_"))}}
    wall, (machine, own) = time.perf_counter(), busy_seconds()
    result["dispatch"] = dispatch(torch, npu, args.loops, args.repeats)
    if not args.skip_resnet:
        result["resnet18_train"] = resnet18_train(torch, npu, args.warmup, args.steps, args.threads)
    result["load_avg_end"] = list(os.getloadavg())
    machine_end, own_end = busy_seconds()
    # The share of the machine's CPU time other processes used while this one measured (0: alone).
    result["others_cpu_share"] = max(0.0, (machine_end - machine) - (own_end - own)) / (
        (time.perf_counter() - wall) * os.cpu_count())
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
