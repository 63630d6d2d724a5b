#!/usr/bin/python3
"""One ResNet-18 training step (batch 8, 3x224x224, SGD, cross entropy) on the npuscope PyTorch
device and on CPU PyTorch, 2 threads: the figure issue 16 tracks (the device within 2x of the CPU).

    PYTHONPATH=build/python /usr/bin/python3 bench/torch_train_step.py [cpu|npu|both]

Prints the minimum and the median of 8 steps after a warm-up step. On a shared machine the minimum
is the steadier figure. To time another build of the emulator with the same device library, put its
directory first: LD_LIBRARY_PATH=OTHER_BUILD/emulator (the device library finds the emulator through
its RUNPATH, which LD_LIBRARY_PATH overrides).
"""
import statistics
import sys
import time

import torch
import torchvision

import npuscope.torch as npu


def step_times(device, x, y, steps=9):
    model = torchvision.models.resnet18().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    xd, yd = x.to(device), y.to(device)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss = torch.nn.functional.cross_entropy(model(xd), yd)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()  # waits for the device
        times.append(time.perf_counter() - t0)
    return min(times[1:]), statistics.median(times[1:])


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "both"
    torch.set_num_threads(2)
    torch.manual_seed(0)
    npu.set_precision_mode("must_keep_origin_dtype")
    x, y = torch.randn(8, 3, 224, 224), torch.randint(0, 1000, (8,))
    if which in ("cpu", "both"):
        print("cpu    step min %.3f s, median %.3f s" % step_times("cpu", x, y))
    if which in ("npu", "both"):
        print("device step min %.3f s, median %.3f s" % step_times(npu.device(), x, y))


if __name__ == "__main__":
    main()
