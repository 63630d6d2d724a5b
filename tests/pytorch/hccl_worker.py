"""One rank of test_distributed.py's collectives test, run by torchrun: every collective of the "hccl"
backend on device tensors, checked against the values computed here by hand (exact: small integers
in every dtype). Prints "hccl worker rank R: ok" at the end; any failure raises."""
import os

import torch
import torch.distributed as dist

import npuscope.distributed as nd
import npuscope.torch as npu

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
DEV = npu.device()


def same(actual, expected, what):
    actual = actual.cpu()
    if actual.dtype != expected.dtype or not torch.equal(actual, expected):
        raise AssertionError("rank %d, %s: got %s, expected %s" % (RANK, what, actual, expected))


def all_reduce():
    base = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t = (base + RANK).to(DEV)
    ptr = t.data_ptr()
    dist.all_reduce(t)
    same(t, sum(base + r for r in range(WORLD)), "all_reduce sum")
    if t.data_ptr() != ptr:
        raise AssertionError("all_reduce must write the caller's tensor in place")
    for op, fold in ((dist.ReduceOp.MAX, max), (dist.ReduceOp.MIN, min)):
        t = torch.tensor([RANK, -RANK], dtype=torch.int32).to(DEV)
        dist.all_reduce(t, op=op)
        same(t, torch.tensor([fold(range(WORLD)), fold(-r for r in range(WORLD))], dtype=torch.int32), str(op))
    t = torch.tensor([RANK + 1], dtype=torch.int64).to(DEV)
    dist.all_reduce(t, op=dist.ReduceOp.PRODUCT)
    same(t, torch.tensor([torch.arange(1, WORLD + 1).prod().item()]), "all_reduce product")
    t = torch.full((4,), float(RANK), dtype=torch.float32).to(DEV)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    same(t, torch.full((4,), sum(range(WORLD)) / WORLD), "all_reduce avg")
    for dtype in (torch.float16, torch.bfloat16):
        t = torch.full((3,), RANK + 1.0, dtype=dtype).to(DEV)
        dist.all_reduce(t)
        same(t, torch.full((3,), WORLD * (WORLD + 1) / 2, dtype=dtype), "all_reduce %s" % dtype)
    # A view with gaps: the result lands in the view, the elements around it stay.
    t = torch.zeros(2, 4).to(DEV)
    t[:, ::2] = float(RANK + 1)
    dist.all_reduce(t[:, ::2])
    expected = torch.zeros(2, 4)
    expected[:, ::2] = WORLD * (WORLD + 1) / 2
    same(t, expected, "all_reduce on a strided view")
    # async_op: the work is complete and its future holds the result (DDP's comm hook reads it).
    t = torch.ones(5).to(DEV)
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    if not work.is_completed() or work.get_future().value()[0] is None:
        raise AssertionError("all_reduce's work must be complete with a future value")
    same(work.get_future().value()[0], torch.full((5,), float(WORLD)), "the future's value")


def all_gather_broadcast():
    mine = torch.tensor([RANK, 10 * RANK], dtype=torch.int32).to(DEV)
    outs = [torch.empty(2, dtype=torch.int32).to(DEV) for _ in range(WORLD)]
    dist.all_gather(outs, mine)
    for r in range(WORLD):
        same(outs[r], torch.tensor([r, 10 * r], dtype=torch.int32), "all_gather from rank %d" % r)
    flat = torch.empty(2 * WORLD, dtype=torch.int32).to(DEV)
    dist.all_gather_into_tensor(flat, mine)
    same(flat, torch.tensor([v for r in range(WORLD) for v in (r, 10 * r)], dtype=torch.int32), "all_gather_into_tensor")
    root = WORLD - 1
    t = torch.full((3, 2), float(RANK)).to(DEV)
    dist.broadcast(t, src=root)
    same(t, torch.full((3, 2), float(root)), "broadcast from %d" % root)


def reduce_scatter_all_to_all():
    inputs = [torch.full((3,), float(10 * RANK + j)).to(DEV) for j in range(WORLD)]
    out = torch.empty(3).to(DEV)
    dist.reduce_scatter(out, inputs)
    same(out, torch.full((3,), float(sum(10 * r + RANK for r in range(WORLD)))), "reduce_scatter")
    src = (torch.arange(2 * WORLD) + 100 * RANK).to(DEV)
    dst = torch.empty(2 * WORLD, dtype=torch.int64).to(DEV)
    dist.all_to_all_single(dst, src)
    same(dst, torch.tensor([100 * r + 2 * RANK + k for r in range(WORLD) for k in range(2)]), "all_to_all_single")


def send_recv_ring():
    # Send and recv meet like HCCL's (each waits for its peer): even ranks send first, odd ranks
    # receive first, or a ring of senders would wait for each other forever.
    nxt, prev = (RANK + 1) % WORLD, (RANK - 1) % WORLD
    out = torch.tensor([RANK * 1.5, -RANK]).to(DEV)
    got = torch.empty(2).to(DEV)
    if RANK % 2 == 0:
        dist.send(out, nxt)
        dist.recv(got, prev)
    else:
        dist.recv(got, prev)
        dist.send(out, nxt)
    same(got, torch.tensor([prev * 1.5, -prev]), "recv from %d" % prev)


def sub_groups():
    odd = dist.new_group([r for r in range(WORLD) if r % 2 == 1])
    even = dist.new_group([r for r in range(WORLD) if r % 2 == 0])
    mine = odd if RANK % 2 == 1 else even
    members = [r for r in range(WORLD) if r % 2 == RANK % 2]
    if nd.communicator_name(mine) != "group_" + "_".join(map(str, members)):
        raise AssertionError("sub-group name %r" % nd.communicator_name(mine))
    t = torch.tensor([float(RANK)]).to(DEV)
    dist.all_reduce(t, group=mine)
    same(t, torch.tensor([float(sum(members))]), "all_reduce on %s" % members)
    dist.broadcast(t, src=members[-1], group=mine)  # a world rank, as torch.distributed takes it
    same(t, torch.tensor([float(sum(members))]), "broadcast on %s" % members)


def errors():
    try:
        dist.all_reduce(torch.ones(3))
    except RuntimeError as e:
        if "move the tensor there first" not in str(e):
            raise AssertionError("a cpu tensor's error says: %s" % e)
    else:
        raise AssertionError("all_reduce of a cpu tensor must raise")


def main():
    dist.init_process_group("hccl")
    if dist.get_backend() != "hccl" or nd.communicator_name() != nd.WORLD_GROUP_NAME:
        raise AssertionError("backend %r, communicator %r" % (dist.get_backend(), nd.communicator_name()))
    all_reduce()
    all_gather_broadcast()
    reduce_scatter_all_to_all()
    send_recv_ring()
    sub_groups()
    errors()
    dist.barrier()
    npu.synchronize()  # raises a collective's fault (a mismatch between ranks), if any
    dist.destroy_process_group()
    print("hccl worker rank %d: ok" % RANK, flush=True)


if __name__ == "__main__":
    main()
