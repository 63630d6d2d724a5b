#!/usr/bin/python3
"""The shared real 910B profile's workload on the emulated NPU: torchvision's AlexNet trained
data-parallel (DistributedDataParallel over the "hccl" backend, one process and one emulated device
per rank), f32, SGD(momentum, weight_decay, foreach=True), so that its trace diffs against the real
one op by op (docs/calibration.md "Emulated vs real", `npuscope diff emulated.db REAL_ascend_pt`).

    PYTHONPATH=build/python /usr/bin/python3 -m torch.distributed.run --standalone --nproc_per_node=2 \\
        --redirects=1 --tee=1 --no_python npuscope run -o traces/alexnet_%r.db -- \\
        /usr/bin/python3 samples/pytorch/alexnet_dp.py --steps 3
    npuscope diff traces/alexnet_0.db ../shared/realdata/ascend_pytorch_profiler/text/level1/rank0_ascend_pt \\
        --base-step 2 --new-step 50

The shapes are read off the real profile's kernels (shared/realdata/ascend_pytorch_profiler, level1
rank 0, kernel_details.csv): input [32,3,224,224] per rank; convs 64/11/s4/p2, 192/5/p2, 384/3/p1,
256/3/p1, 256/3/p1 with ReLU; max pools 3/2 after conv 1, 2 and 5; adaptive average pool to 6x6;
dropout, 9216-4096, ReLU, dropout, 4096-4096, ReLU, 4096-1000; cross entropy; top-1/top-5 accuracy
(the profile's TopKV2, Equal and ReduceSum kernels); 3 ForeachAddList + 1 ForeachMulScalar a step
(SGD with momentum and weight decay, foreach). --batch makes it smaller (the tests run --batch 4).
Each optimizer.step() ends a step (step markers, as the profiler's ProfilerStep#).
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import npuscope.torch as npu


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--batch", type=int, default=32, help="samples per rank and step (the real profile's: 32)")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--single", action="store_true", help="one process, no torch.distributed")
    return p.parse_args()


class AlexNet(nn.Module):
    """torchvision.models.alexnet's layers and names, written out with the profile's shapes."""

    def __init__(self, classes=1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.5), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(p=0.5), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def accuracy(output, target, topk=(1, 5)):
    """The ImageNet example's top-k accuracy, in % of the batch (the profile's TopKV2, Equal, ReduceSum)."""
    _, pred = output.topk(max(topk), 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    return [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / target.size(0)) for k in topk]


def main():
    args = parse()
    rank, world = (0, 1) if args.single else (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    dev = npu.device(int(os.environ.get("LOCAL_RANK", 0)) % npu.device_count())
    npu.set_device(dev)
    if not args.single:
        dist.init_process_group("hccl")  # env:// from torchrun

    torch.manual_seed(0)  # the same initial weights on every rank (DDP broadcasts rank 0's anyway)
    model = AlexNet().to(dev)
    if not args.single:
        model = nn.parallel.DistributedDataParallel(model)  # no device_ids: PyTorch 1.13 takes CUDA's only
        npu.synchronize(dev)  # every rank starts step 0 after DDP's broadcast of the weights
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4, foreach=True)
    g = torch.Generator().manual_seed(1000 + rank)

    for step in range(args.steps):
        x = torch.randn(args.batch, 3, 224, 224, generator=g).to(dev)
        y = torch.randint(0, 1000, (args.batch,), generator=g).to(dev)
        out = model(x)
        loss = F.cross_entropy(out, y)
        acc1, acc5 = accuracy(out, y)
        # torch 2's default, as the real run: its step has no Fill per gradient and no accumulating Add.
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if rank == 0:
            print("rank %d step %d loss %.4f acc@1 %.1f acc@5 %.1f" % (rank, step, loss.item(), acc1.item(),
                                                                      acc5.item()), flush=True)
    if not args.single:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
