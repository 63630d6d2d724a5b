#!/usr/bin/python3
"""Trains a model on the emulated NPU (the PyTorch device "privateuseone") or on the CPU, the way a
torch_npu user trains on an Ascend NPU.

    PYTHONPATH=build/python /usr/bin/python3 samples/pytorch/train.py --model gpt --steps 5
    PYTHONPATH=build/python npuscope run -o train.db -- /usr/bin/python3 samples/pytorch/train.py

Models: gpt (a small GPT-style decoder, AdamW), resnet18 (torchvision, SGD with momentum). Data is
random (a fixed seed), so the loss of a few steps shows the model fitting one batch.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt import GPT  # noqa: E402


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=("gpt", "resnet18"), default="gpt")
    p.add_argument("--device", choices=("npu", "cpu"), default="npu")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--precision-mode", default="must_keep_origin_dtype",
                   help="force_fp16, allow_fp32_to_fp16, allow_mix_precision, must_keep_origin_dtype")
    p.add_argument("--image-size", type=int, default=64, help="resnet18 input size")
    p.add_argument("--loss-scale", type=float, default=0,
                   help="npu: dynamic loss scaling from this initial scale (npuscope.torch.amp.GradScaler); 0: none")
    p.add_argument("--overflow-mode", default=None, help="npu: inf_nan or saturation (default: the device's)")
    return p.parse_args()


def main():
    args = parse()
    if args.device == "npu":
        import npuscope.torch as npu
        npu.set_precision_mode(args.precision_mode)
        if args.overflow_mode:
            npu.set_overflow_mode(args.overflow_mode)
        dev = npu.device()
    else:
        npu, dev = None, torch.device("cpu")
    torch.manual_seed(0)
    if args.model == "gpt":
        model = GPT(vocab=256, block=64, dim=128, heads=4, layers=2, dropout=0.1)
        opt_factory = lambda m: torch.optim.AdamW(m.parameters(), lr=3e-3, weight_decay=0.01)  # noqa: E731
        x = torch.randint(0, 256, (args.batch, 64))
        y = torch.roll(x, -1, 1)
        loss_fn = lambda m, x, y: m(x, y)[1]  # noqa: E731
    else:
        import torchvision
        model = torchvision.models.resnet18(num_classes=10)
        opt_factory = lambda m: torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)  # noqa: E731
        x = torch.randn(args.batch, 3, args.image_size, args.image_size)
        y = torch.randint(0, 10, (args.batch,))
        loss_fn = lambda m, x, y: F.cross_entropy(m(x), y)  # noqa: E731
    model = model.to(dev).train()
    opt = opt_factory(model)
    x, y = x.to(dev), y.to(dev)
    scaler = npu.amp.GradScaler(init_scale=args.loss_scale) if npu is not None and args.loss_scale > 0 else None
    for step in range(args.steps):
        start = time.perf_counter()
        loss = loss_fn(model, x, y)
        opt.zero_grad()
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(opt)  # skipped when the gradients overflowed
            scaler.update()
        value = loss.item()  # waits for the device
        scale = "" if scaler is None else "  loss scale %g" % scaler.get_scale()
        print("step %d  loss %.4f%s  %.0f ms" % (step, value, scale, (time.perf_counter() - start) * 1e3))
    if npu is not None:
        npu.synchronize()
        print("device memory: peak %.1f MiB allocated, %.1f MiB reserved" %
              (npu.max_memory_allocated() / 2**20, npu.max_memory_reserved() / 2**20))
        fallbacks = npu.fallback_ops()
        print("ops through the CPU fallback: %s" % (fallbacks or "none"))


if __name__ == "__main__":
    main()
