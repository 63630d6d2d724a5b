#!/usr/bin/python3
"""Runs a torchvision model's inference on the emulated NPU and on the CPU, and compares them.

    PYTHONPATH=build/python /usr/bin/python3 samples/pytorch/infer.py --model resnet50
    PYTHONPATH=build/python /usr/bin/python3 samples/pytorch/infer.py --model vit_b_16 --precision-mode force_fp16

Weights are random (seeded): what matters is how close the device's outputs are to PyTorch's CPU
ones under each precision mode (cosine similarity, max abs error) and what the device's run costs.
"""
import argparse
import copy
import time

import torch
import torch.nn.functional as F
import torchvision

import npuscope.torch as npu


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="resnet18", help="a torchvision.models name (resnet18, resnet50, vit_b_16, ...)")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--precision-mode", default="must_keep_origin_dtype")
    args = p.parse_args()
    npu.set_precision_mode(args.precision_mode)
    torch.manual_seed(0)
    model = getattr(torchvision.models, args.model)().eval()
    for m in model.modules():  # torchvision starts some heads at zero: make the outputs informative
        if isinstance(m, torch.nn.Linear) and not m.weight.abs().sum():
            torch.nn.init.normal_(m.weight, std=0.02)
    x = torch.randn(args.batch, 3, 224, 224)
    dev_model = copy.deepcopy(model).to(npu.device())
    with torch.no_grad():
        start = time.perf_counter()
        expected = model(x)
        cpu_ms = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        actual = dev_model(x.to(npu.device())).cpu()
        npu_ms = (time.perf_counter() - start) * 1e3
    cosine = F.cosine_similarity(expected.flatten().double(), actual.flatten().double(), dim=0).item()
    print("%s, batch %d, %s" % (args.model, args.batch, args.precision_mode))
    print("  cosine similarity to CPU PyTorch: %.7f   max abs error: %.3g" %
          (cosine, (expected - actual).abs().max().item()))
    print("  top-5 classes  cpu: %s  npu: %s" % (expected[0].topk(5).indices.tolist(), actual[0].topk(5).indices.tolist()))
    print("  host time: cpu %.0f ms, emulated npu %.0f ms; device memory peak %.1f MiB" %
          (cpu_ms, npu_ms, npu.max_memory_allocated() / 2**20))
    print("  ops through the CPU fallback: %s" % (npu.fallback_ops() or "none"))


if __name__ == "__main__":
    main()
