#!/usr/bin/python3
"""Data-parallel training of a small MLP on the emulated NPU with DistributedDataParallel over the
"hccl" backend, launched by torchrun (one process, one emulated device per rank).

    PYTHONPATH=build/python /usr/bin/python3 -m torch.distributed.run --standalone --nproc_per_node=4 \\
        --redirects=1 --tee=1 samples/pytorch/ddp_train.py --steps 5 --slow-rank 2 --slow-factor 3
    PYTHONPATH=build/python /usr/bin/python3 samples/pytorch/ddp_train.py --single   # the same, one process

Every step draws one global batch from a fixed seed; rank r trains on its contiguous share of it
(--global-batch divided by the world size), so the job computes what one process computes on the
whole batch (--single). Printed per step: the global loss (the ranks' mean, all-reduced, hence the
same on every rank) and the step's modelled device time. --slow-rank R --slow-factor F makes rank R's
emulated device F times slower at computing: the others then wait for it in every all-reduce.
--check DIR writes each rank's losses and final parameters to DIR/rank_<r>.pt (DIR/single.pt).
(--redirects/--tee: Debian 12's torchrun cannot read their default on Python 3.11, docs/cluster.md.)
"""
import argparse
import json
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.nn.functional as F

import npuscope.torch as npu


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--global-batch", type=int, default=32, help="samples per step over all ranks")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--spec", help="the emulated NPU: a preset or a spec file (default: NPUSCOPE_SPEC, else ascend910b)")
    p.add_argument("--slow-rank", type=int, default=-1, help="this rank's device computes --slow-factor times slower")
    p.add_argument("--slow-factor", type=float, default=1.0)
    p.add_argument("--single", action="store_true", help="one process on the whole batch, no torch.distributed")
    p.add_argument("--check", metavar="DIR", help="write losses and final parameters to DIR/rank_<r>.pt")
    return p.parse_args()


def slow_down(factor):
    """Emulates a device `factor` times slower at computing: the current spec (NPUSCOPE_SPEC, a preset
    or a spec file) with compute_slowdown set, before the first tensor is on the device."""
    current = os.environ.get("NPUSCOPE_SPEC", "ascend910b")
    if os.path.isfile(current):
        with open(current) as f:
            spec = json.load(f)
    else:
        spec = {"base": current}
    spec["compute_slowdown"] = factor
    fd, path = tempfile.mkstemp(prefix="npuscope_slow_", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(spec, f)
    try:
        npu.set_spec(path)
    finally:
        os.unlink(path)


def data(args, world, rank):
    """This rank's share of every step's global batch: the same numbers whatever the world size."""
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(args.steps, args.global_batch, 32, generator=g)
    teacher = torch.randn(32, 10, generator=g)  # labels a linear model can learn: the loss falls
    y = (x @ teacher).argmax(-1)
    share = args.global_batch // world
    return x[:, rank * share:(rank + 1) * share], y[:, rank * share:(rank + 1) * share]


def main():
    args = parse()
    rank, world = (0, 1) if args.single else (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    if args.global_batch % world != 0:
        sys.exit("ddp_train.py: error: --global-batch %d does not divide into %d ranks" % (args.global_batch, world))
    if not 1 <= args.slow_factor <= 1000:
        sys.exit("ddp_train.py: error: --slow-factor %g is not in [1, 1000]" % args.slow_factor)
    if args.spec:
        os.environ["NPUSCOPE_SPEC"] = args.spec  # slow_down() starts from it
    if rank == args.slow_rank and args.slow_factor != 1.0:
        slow_down(args.slow_factor)  # before the process group: it reads the spec's ranks_per_node
        print("rank %d: the device computes %gx slower" % (rank, args.slow_factor), flush=True)
    elif args.spec:
        npu.set_spec(args.spec)
    dev = npu.device(int(os.environ.get("LOCAL_RANK", 0)) % npu.device_count())
    npu.set_device(dev)
    if not args.single:
        dist.init_process_group("hccl")  # env:// from torchrun

    torch.manual_seed(0)  # the same initial weights on every rank (DDP broadcasts rank 0's anyway)
    model = torch.nn.Sequential(torch.nn.Linear(32, args.hidden), torch.nn.ReLU(), torch.nn.Linear(args.hidden, 10))
    model = model.to(dev)
    if not args.single:
        # No device_ids: PyTorch 1.13's DDP takes them for CUDA devices only.
        model = torch.nn.parallel.DistributedDataParallel(model)
        # Wait for DDP's broadcast of the weights: every rank's host then starts step 0 at its common end,
        # not after its own start-up (each process imports and builds in its own real time).
        npu.synchronize(dev)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    xs, ys = data(args, world, rank)

    losses = []
    for step in range(args.steps):
        start, end = npu.Event(), npu.Event()
        start.record()
        x, y = xs[step].to(dev), ys[step].to(dev)
        loss = F.cross_entropy(model(x), y)  # this rank's mean; DDP averages the gradients over ranks
        opt.zero_grad()
        loss.backward()
        opt.step()
        global_loss = loss.detach().clone()
        if not args.single:
            dist.all_reduce(global_loss)
            global_loss /= world
        end.record()
        losses.append(global_loss.item())
        if rank == 0 or args.slow_rank >= 0:
            print("rank %d step %d loss %.6f device time %.3f ms" % (rank, step, losses[-1], start.elapsed_time(end)),
                  flush=True)

    if args.check:
        params = {n: p.detach().cpu() for n, p in (model.module if not args.single else model).named_parameters()}
        name = "single.pt" if args.single else "rank_%d.pt" % rank
        torch.save({"losses": losses, "params": params, "world": world}, os.path.join(args.check, name))
    if not args.single:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
