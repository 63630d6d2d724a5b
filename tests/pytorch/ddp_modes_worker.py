"""One rank of test_distributed.py's DDP modes test, run by torchrun: DistributedDataParallel's
options and comm hooks on the "hccl" backend keep every rank's parameters bitwise the same. Prints
"ddp modes rank R: MODE ok" per mode; a difference raises."""
import os

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

import npuscope.torch as npu

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
MODES = {
    "default": {},
    "no_sync": {},
    "find_unused_parameters+gradient_as_bucket_view": dict(find_unused_parameters=True, gradient_as_bucket_view=True),
    "static_graph": dict(static_graph=True),
    "fp16_compress_hook": {},
    "allreduce_hook": {},
}


def train(mode, dev):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).to(dev)
    ddp = torch.nn.parallel.DistributedDataParallel(model, **MODES[mode])
    if mode.endswith("_hook"):
        ddp.register_comm_hook(None, getattr(default_hooks, mode))
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    torch.manual_seed(RANK + 1)  # each rank its own data
    for step in range(3):
        x = torch.randn(4, 8).to(dev)
        if mode == "no_sync" and step == 0:
            with ddp.no_sync():  # accumulated locally; the next backward all-reduces the sum
                ddp(x).sum().backward()
            continue
        ddp(x).sum().backward()
        opt.step()
        opt.zero_grad()
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def main():
    dist.init_process_group("hccl")
    dev = npu.device()
    for mode in MODES:
        flat = train(mode, dev)
        everyone = [torch.empty_like(flat) for _ in range(WORLD)]
        dist.all_gather(everyone, flat)
        for r, theirs in enumerate(everyone):
            if not torch.equal(theirs.cpu(), flat.cpu()):
                raise AssertionError("%s: rank %d's parameters differ from rank %d's" % (mode, r, RANK))
        print("ddp modes rank %d: %s ok" % (RANK, mode), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
