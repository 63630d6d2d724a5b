#!/usr/bin/python3
"""What profiling costs a PyTorch training step: a torchvision ResNet-18 SGD step on the emulated NPU,
unprofiled and under `npuscope run --dump none`, `--dump stats` (msprobe's API entries recorded, and
without them: NPUSCOPE_MSPROBE_APIS=0) and `--check-ops`.

    PYTHONPATH=BUILD/python /usr/bin/python3 bench/torch_profile_overhead.py BUILD [--rounds N] [--batch B]

Each variant is a whole process running the same script (bench/torch_profile_overhead.py --step-script):
a warm-up step, then --steps timed steps, each timed by the script itself around the step (so the
interpreter's start, torch's import and the trace's conversion after exit are not in the figure:
what a user's training loop sees). Rounds run the variants one after the other, the order rotated
every round so that a drift of the machine's load hits them alike; the figure of a variant is its
median step over all rounds. A step's time varies by several percent from one process to the next
(where OpenBLAS's two threads land), so the judged variants run in every round; --check-ops, ~20x
slower and only reported, runs in the first round only. Targets (issue 17): --dump none <= 1.10x, --dump stats <= 1.5x the
unprofiled step; --check-ops is reported. One JSON line on stdout (bench/report.py reads it).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TARGETS = {"dump_none": 1.10, "dump_stats": 1.5}


def step_script(args):
    import torch
    import torchvision
    import npuscope.torch as npu
    torch.manual_seed(0)
    dev = npu.device()
    model = torchvision.models.resnet18(num_classes=10).to(dev).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(args.batch, 3, args.size, args.size).to(dev)
    y = torch.randint(0, 10, (args.batch,)).to(dev)
    times = []
    for i in range(args.steps + 1):
        start = time.perf_counter()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()  # waits for the device
        if i > 0:  # the first step warms up (allocator, caches)
            times.append(time.perf_counter() - start)
    print("STEPS " + json.dumps(times))


def run_variant(build, variant, args, out_dir):
    cmd = [sys.executable, os.path.abspath(__file__), "--step-script", "--steps", str(args.steps), "--batch",
           str(args.batch), "--size", str(args.size)]
    env = dict(os.environ)
    if variant == "dump_stats_aten":
        env["NPUSCOPE_MSPROBE_APIS"] = "0"
    if variant != "unprofiled":
        flags = {"dump_none": ["--dump", "none"], "dump_stats": ["--dump", "stats"],
                 "dump_stats_aten": ["--dump", "stats"], "check_ops": ["--check-ops"]}
        cmd = [os.path.join(build, "cli", "npuscope"), "run", "--force", "-o",
               os.path.join(out_dir, variant + ".db")] + flags[variant] + ["--"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, env=env)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (variant, p.returncode, p.stderr[-2000:]))
    for line in p.stdout.splitlines():
        if line.startswith("STEPS "):
            return json.loads(line[6:])
    raise RuntimeError("%s printed no step times" % variant)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build", nargs="?", default="build")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--no-check-ops", action="store_true", help="leave --check-ops out (it is slow)")
    p.add_argument("--step-script", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.step_script:
        return step_script(args)
    variants = ["unprofiled", "dump_none", "dump_stats", "dump_stats_aten", "check_ops"]
    steps = {v: [] for v in variants}
    with tempfile.TemporaryDirectory() as out_dir:
        for r in range(args.rounds):
            order = variants[r % len(variants):] + variants[:r % len(variants)]
            for v in order:
                if v == "check_ops" and (r > 0 or args.no_check_ops):
                    continue
                print("round %d: %s" % (r + 1, v), file=sys.stderr)
                steps[v] += run_variant(os.path.abspath(args.build), v, args, out_dir)
    variants = [v for v in variants if steps[v]]
    median = {v: statistics.median(steps[v]) for v in variants}
    result = {"workload": "torchvision resnet18, SGD momentum, batch %d, %dx%d, f32" % (args.batch, args.size,
                                                                                      args.size),
              "steps_per_variant": len(steps["unprofiled"]), "median_step_s": median,
              "ratio": {v: median[v] / median["unprofiled"] for v in variants if v != "unprofiled"},
              "targets": TARGETS}
    for v, target in TARGETS.items():
        if result["ratio"][v] > target:
            print("warning: %s %.2fx is above its target %.2fx" % (v, result["ratio"][v], target), file=sys.stderr)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
