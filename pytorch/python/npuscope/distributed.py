"""torch.distributed on the emulated NPU: the "hccl" backend, under the name torch_npu registers.

    import torch.distributed as dist
    import npuscope.torch as npu           # registers "hccl" (so does `import npuscope.distributed`)
    dist.init_process_group("hccl")        # under torchrun: env:// (RANK, WORLD_SIZE, MASTER_ADDR, ...)
    model = torch.nn.parallel.DistributedDataParallel(model.npu())   # no device_ids on this device

    torchrun --nproc_per_node=4 train.py

Collectives on privateuseone tensors are the emulator's HCCL tasks (the link model's time, the wait
for the last rank; docs/cluster.md "PyTorch: the hccl backend"); their bytes travel through
torch.distributed's gloo over the same store. The world's communicator is "hccl_world_group", a
sub-group's (dist.new_group) "group_" and its world ranks. A rank's emulated server is
rank // ranks_per_node of the device spec, or of NPUSCOPE_RANKS_PER_NODE. Set the spec
(npuscope.torch.set_spec, NPUSCOPE_SPEC) before init_process_group.
"""
import torch.distributed as _dist

import npuscope.torch  # noqa: F401  (loads the device's library before the module that links it)
from npuscope import _c10d

BACKEND = "hccl"
WORLD_GROUP_NAME = _c10d.WORLD_GROUP_NAME  # "hccl_world_group"

__all__ = ["BACKEND", "WORLD_GROUP_NAME", "is_available", "communicator_name"]

_names_used = set()  # sub-group names this process has made, to keep repeated rank lists apart


def is_available():
    """True: the hccl backend is registered with torch.distributed (torch_npu's is_hccl_available)."""
    return hasattr(_dist.Backend, BACKEND.upper())


def communicator_name(group=None):
    """The emulator communicator's name of a process group of the hccl backend (default: the world)."""
    pg = _dist.distributed_c10d._get_default_group() if group is None else group
    if not isinstance(pg, _c10d.ProcessGroupHCCL):
        raise ValueError("npuscope.distributed.communicator_name: %r is not a process group of the hccl backend" % pg)
    return pg.name


def _name(global_ranks, group_id):
    """The same on every member: from the ranks, and torch's group id for a rank list made again."""
    if not global_ranks:
        return WORLD_GROUP_NAME
    name = "group_" + "_".join(str(r) for r in global_ranks)
    if name in _names_used:
        name += "_" + str(group_id)
    _names_used.add(name)
    return name


def _create(options, pg_options):
    """torch.distributed's factory call (extended_api): options has store, group_rank, group_size,
    timeout, group_id and global_ranks_in_group (empty for the world)."""
    if pg_options is not None:
        raise ValueError("the hccl backend takes no pg_options")
    ranks = [int(r) for r in options.global_ranks_in_group]
    rank, size = options.group_rank, options.group_size
    # A prefix of its own: gloo's rendezvous keys never meet torch's keys for this group.
    inner = _dist.ProcessGroupGloo(_dist.PrefixStore("npuscope_gloo", options.store), rank, size, options.timeout)
    return _c10d.ProcessGroupHCCL(inner, rank, size, _name(ranks, options.group_id), ranks or list(range(size)))


if _dist.is_available() and not is_available():
    _dist.Backend.register_backend(BACKEND, _create, extended_api=True)
