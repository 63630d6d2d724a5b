"""PyTorch's CPU kernels on the shapes of bench/training_ops_bench.cpp (ConvLayer, BinaryOp, AddHalf,
ReduceSumBias, BatchNorm), with 2 threads: the yardstick for the emulator's training kernels.

Run: /usr/bin/python3 bench/torch_training_ops.py  (prints one line per case, median ms)
"""
import statistics
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(2)


def median_ms(fn, repeat=10):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def conv_cases():
    for c, s in ((64, 56), (128, 28), (256, 14), (512, 7)):
        x = torch.rand(8, c, s, s) * 2 - 1
        w = torch.rand(c, c, 3, 3) * 2 - 1
        dy = torch.rand(8, c, s, s) * 2 - 1
        args = dict(stride=[1, 1], padding=[1, 1], dilation=[1, 1], transposed=False, output_padding=[0, 0],
                    groups=1)
        yield f"ConvLayer/{c}/{s}/0 Conv2d", lambda: F.conv2d(x, w, padding=1)
        yield f"ConvLayer/{c}/{s}/1 Conv2DBackpropInput", lambda: torch.ops.aten.convolution_backward(
            dy, x, w, None, output_mask=[True, False, False], **args)
        yield f"ConvLayer/{c}/{s}/2 Conv2DBackpropFilter", lambda: torch.ops.aten.convolution_backward(
            dy, x, w, None, output_mask=[False, True, False], **args)


def other_cases():
    p = torch.rand(11689, 1000) * 2 - 1
    same = torch.rand(11689, 1000) + 1
    scalar = torch.rand(1) + 1
    row = torch.rand(1000) + 1
    for i, op in enumerate((torch.add, torch.sub, torch.mul, torch.div)):
        yield f"BinaryOp/{i}/0", lambda op=op: op(p, same)
    for i, op in ((0, torch.add), (2, torch.mul)):
        yield f"BinaryOp/{i}/1", lambda op=op: op(p, scalar)
        yield f"BinaryOp/{i}/2", lambda op=op: op(p, row)
    for i, t in enumerate((torch.float16, torch.bfloat16)):
        ph, gh = p.to(t), same.to(t)
        yield f"AddHalf/{i}", lambda ph=ph, gh=gh: torch.add(ph, gh)
    dy = torch.rand(8, 64, 56, 56) * 2 - 1
    x = torch.rand(8, 64, 56, 56) * 2 - 1
    w, b = torch.rand(64) + 0.5, torch.rand(64) * 2 - 1
    rm, rv = torch.zeros(64), torch.ones(64)
    yield "ReduceSumBias", lambda: dy.sum((0, 2, 3))
    yield "BatchNorm/0", lambda: torch.native_batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5)
    _, mean, invstd = torch.native_batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5)
    yield "BatchNorm/1", lambda: torch.ops.aten.native_batch_norm_backward(
        dy, x, w, rm, rv, mean, invstd, True, 1e-5, [True, True, True])


if __name__ == "__main__":
    with torch.no_grad():
        for name, fn in list(conv_cases()) + list(other_cases()):
            print(f"{name:45s} {median_ms(fn):8.2f} ms")
