#!/usr/bin/python3
"""PyTorch's time for the ResNet-18 forward pass that bench/onnx_exec_bench.cpp times on the emulator.

    torch_resnet18.py MODEL.onnx [--npuscope BUILD/cli/npuscope] [--min-time 2] [--threads N]

Builds ResNet-18 in plain torch.nn (torchvision's module names, no torchvision needed), loads the
SAME weights from the ONNX initializers (samples/models/make_resnet18.py names them after the
state_dict keys), and prints one JSON object: the median forward time (batch 1, eval, no_grad,
after warm-up) with nproc intra-op threads and with 1 thread; "median_ms" is the faster of the two
(on a small or busy machine OpenMP's nproc threads can be several times slower than one, and the
reference should be PyTorch at its best). With --npuscope it also runs
`npuscope exec --device cpu` on a fixed input and reports how far the emulator's CPU logits are from
PyTorch's ("check"). Without torch it prints {"available": false, ...} and exits 0, so that
bench/run_bench.sh can say so.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper


def build_resnet18(nn):
    """torchvision.models.resnet18's topology and module names, in plain torch.nn."""

    class BasicBlock(nn.Module):
        def __init__(self, c_in, c_out, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(c_out)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(c_out)
            self.downsample = None
            if stride != 1 or c_in != c_out:
                self.downsample = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return self.relu(y + (x if self.downsample is None else self.downsample(x)))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            c_in = 64
            for stage, c_out in enumerate((64, 128, 256, 512), start=1):
                stride = 1 if stage == 1 else 2
                blocks = nn.Sequential(BasicBlock(c_in, c_out, stride), BasicBlock(c_out, c_out, 1))
                setattr(self, "layer%d" % stage, blocks)
                c_in = c_out
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(512, 1000)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(self.avgpool(x).flatten(1))

    return ResNet18()


def load_onnx_weights(torch, net, model):
    """Copies every initializer into the state_dict entry of the same name; all must be covered."""
    weights = {init.name: numpy_helper.to_array(init) for init in model.graph.initializer}
    state = net.state_dict()
    missing = [k for k in state if k not in weights and not k.endswith("num_batches_tracked")]
    unused = [k for k in weights if k not in state]
    if missing or unused:
        raise SystemExit("torch_resnet18.py: weights do not match the model (missing %s, unused %s)"
                         % (missing[:5], unused[:5]))
    for name, array in weights.items():
        if tuple(state[name].shape) != array.shape:
            raise SystemExit("torch_resnet18.py: %s is %s in ONNX, %s in torch"
                             % (name, array.shape, tuple(state[name].shape)))
        state[name] = torch.from_numpy(array.copy())
    net.load_state_dict(state)


def image_size(model):
    dims = model.graph.input[0].type.tensor_type.shape.dim
    return dims[2].dim_value, dims[3].dim_value


def time_forward(torch, net, x, min_time):
    with torch.no_grad():
        for _ in range(3):  # warm-up: first calls allocate and pick algorithms
            net(x)
        times, start = [], time.perf_counter()
        while len(times) < 5 or (time.perf_counter() - start < min_time and len(times) < 200):
            t0 = time.perf_counter()
            net(x)
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), len(times)


def check_against_npuscope(torch, net, model_path, npuscope, size):
    """Runs `npuscope exec --device cpu` on a fixed input; returns how far its logits are from torch's."""
    x = np.random.default_rng(0).uniform(-1, 1, (1, 3) + size).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "input.npy"), x)
        cmd = [npuscope, "exec", "--model", model_path, "--input", "input=" + os.path.join(tmp, "input.npy"),
               "--device", "cpu", "--output-dir", tmp]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            return {"ok": False, "error": "npuscope exec failed (%d): %s" % (run.returncode, run.stderr.strip()[-300:])}
        emulated = np.load(os.path.join(tmp, "output_0.npy"))
    with torch.no_grad():
        expected = net(torch.from_numpy(x)).numpy()
    diff = float(np.max(np.abs(emulated.astype(np.float64) - expected)))
    scale = float(np.max(np.abs(expected)))
    # f32 torch vs the f32/f64 golden: differences are summation-order rounding only.
    return {"ok": bool(diff <= 1e-4 * scale + 1e-5), "max_abs_diff": diff, "max_abs_logit": scale,
            "argmax_equal": bool(np.argmax(emulated) == np.argmax(expected))}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="resnet18.onnx from samples/models/make_resnet18.py")
    parser.add_argument("--npuscope", help="the npuscope binary: check its CPU logits against torch's")
    parser.add_argument("--min-time", type=float, default=2.0, help="seconds of timed forward passes (default 2)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="intra-op threads to try besides 1 (default nproc)")
    args = parser.parse_args(argv)
    try:
        import torch
        from torch import nn
    except ImportError as e:
        print(json.dumps({"available": False, "error": str(e)}))
        return 0
    model = onnx.load(args.model)
    net = build_resnet18(nn).eval()
    load_onnx_weights(torch, net, model)
    size = image_size(model)
    x = torch.from_numpy(np.random.default_rng(1).uniform(-1, 1, (1, 3) + size).astype(np.float32))
    by_threads = {}
    for threads in sorted({args.threads, 1}, reverse=True):
        torch.set_num_threads(threads)
        by_threads[threads] = time_forward(torch, net, x, args.min_time)
    best = min(by_threads, key=lambda t: by_threads[t][0])
    result = {"available": True, "torch": torch.__version__, "threads": best, "image": list(size),
              "median_ms": by_threads[best][0], "iterations": by_threads[best][1],
              "median_ms_by_threads": {str(t): ms for t, (ms, _) in by_threads.items()},
              "load_avg": list(os.getloadavg())}
    if args.npuscope:
        result["check"] = check_against_npuscope(torch, net, args.model, args.npuscope, size)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
