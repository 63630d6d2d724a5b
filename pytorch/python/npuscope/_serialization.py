"""Checkpoints of device tensors: torch.save, torch.load, copy.deepcopy and pickle, as torch_npu has them.

Note [Checkpoints of device tensors]
PyTorch 1.13 saves a tensor as (its storage, offset, size, stride) rebuilt by
torch._utils._rebuild_tensor_v2, and each storage with a location tag that a registered package gives
on save and turns back into a storage on load (torch.serialization.register_package). A device
storage itself cannot take part on 1.13: a storage object of the PrivateUse1 device is refused by
every C++ function that takes one ("Invalid device for storage": its .cpu(), Tensor.set_, the legacy
file writer). So device tensors go through the host:
- save: a device tensor reduces to the standard rebuild of a host copy of its whole storage, the copy
  tagged with the device's location, "npu:N" (torch_npu's tag, so the file loads under torch_npu on a
  real Ascend too). Within one torch.save, views of one device storage share one host copy, so they
  share a storage again when loaded;
- load: the tag marks the loaded host storage with its device (map_location applies as usual: "cpu"
  leaves it unmarked, a device index or "npu:N" / "privateuseone:N" marks it) and the rebuild of a
  tensor on a marked storage copies the storage to the device once and views it there (as_strided);
  the legacy format, which pickle uses, reads a storage's bytes after the tensors are rebuilt, so
  there the device copy is made when the load ends;
- copy.deepcopy clones a device tensor on the device (1.13 would clone its storage, which it cannot).
"""
import threading as _threading
from collections import OrderedDict as _OrderedDict

import torch as _torch
from torch import serialization as _ser

DEVICE_TYPE = "privateuseone"
_TAG = "npu"  # torch_npu's location tag
_MARK = "_npuscope_device"  # on a host storage: the device index its tensors belong to

_local = _threading.local()  # .copies: {device storage key: host storage} in one save; .pending: legacy loads


def _location_index(location):
    """The device index a location names ("npu", "npu:1", "privateuseone:0"), or None when it names
    another device."""
    if location.split(":", 1)[0] not in (_TAG, DEVICE_TYPE):
        return None
    from npuscope import torch as npu  # the device's own parser (npuscope.torch imports this module)
    index = npu._index(location)
    return npu.current_device() if index < 0 else index


# ---- save -----------------------------------------------------------------------------------------

def _tag(storage):
    index = getattr(storage, _MARK, None)
    return None if index is None else "%s:%d" % (_TAG, index)


def _host_storage(tensor):
    """A host copy of the whole storage of device tensor `tensor`, marked with its device (shared by
    the views of one storage within a save)."""
    storage = tensor.storage()
    nbytes = storage.nbytes()
    key = (storage.data_ptr(), nbytes, tensor.dtype)
    copies = getattr(_local, "copies", None)
    if copies is not None and key in copies:
        return copies[key]
    whole = tensor.detach().as_strided((nbytes // tensor.element_size(),), (1,), 0)
    host = whole.cpu().storage().untyped()
    setattr(host, _MARK, tensor.device.index or 0)
    if copies is not None:
        copies[key] = host
    return host


_original_reduce = _torch.Tensor._reduce_ex_internal


def _reduce_ex_internal(self, proto):
    if self.device.type != DEVICE_TYPE:
        return _original_reduce(self, proto)
    _torch.utils.hooks.warn_if_has_hooks(self)
    storage = _torch.storage.TypedStorage(wrap_storage=_host_storage(self), dtype=self.dtype)
    return (_torch._utils._rebuild_tensor_v2,
            (storage, self.storage_offset(), tuple(self.size()), self.stride(), self.requires_grad, _OrderedDict()))


def _sharing_copies(save):
    """`save` (serialization._save or _legacy_save) with one host copy per device storage."""
    def wrapper(*args, **kwargs):
        outer = getattr(_local, "copies", None)
        if outer is None:
            _local.copies = {}
        try:
            return save(*args, **kwargs)
        finally:
            if outer is None:
                _local.copies = None
    wrapper.__wrapped__ = save
    return wrapper


# ---- load -----------------------------------------------------------------------------------------

def _restore(storage, location):
    index = _location_index(location)
    if index is None:
        return None
    count = int(_torch.ops.npuscope.device_count())
    if index >= count:
        raise RuntimeError("torch.load: the checkpoint holds tensors of device %s, but the emulated NPU has %d "
                           "device(s): pass map_location (\"cpu\" or npuscope.torch.device(i)), or set "
                           "NPUSCOPE_NUM_DEVICES" % (location, count))
    setattr(storage, _MARK, index)
    if getattr(storage, "_torch_load_uninitialized", False) and getattr(_local, "marked", None) is not None:
        _local.marked.append(storage)
    return storage


_original_rebuild = _torch._utils._rebuild_tensor


def _rebuild_tensor(storage, storage_offset, size, stride):
    host = storage.untyped()
    index = getattr(host, _MARK, None)
    if index is None:
        return _original_rebuild(storage, storage_offset, size, stride)
    base = getattr(host, "_npuscope_base", None)
    if base is None or base.dtype != storage.dtype:
        device = _torch.device(DEVICE_TYPE, index)
        if getattr(host, "_torch_load_uninitialized", False):  # legacy format: the bytes come later
            base = _torch.empty(storage.size(), dtype=storage.dtype, device=device)
            _local.pending.append((storage, base))
        else:
            base = _host_tensor(storage).to(device)
        host._npuscope_base = base
    return base.as_strided(size, stride, storage_offset)


def _host_tensor(storage):
    return _torch.tensor([], dtype=storage.dtype).set_(storage.untyped(), 0, (storage.size(),), (1,))


_original_legacy_load = _ser._legacy_load


def _legacy_load(f, map_location, pickle_module, **pickle_load_args):
    """The legacy loader, then the device copies of the tensors it rebuilt before it read their bytes. Its
    storages stay marked uninitialized after it read them: the mark is cleared, so that a tensor rebuilt
    on one later (pickle.loads rebuilds after the storage's own load) is copied at once."""
    outer = getattr(_local, "pending", None), getattr(_local, "marked", None)
    _local.pending, _local.marked = [], []
    try:
        result = _original_legacy_load(f, map_location, pickle_module, **pickle_load_args)
        for storage, base in _local.pending:
            base.copy_(_host_tensor(storage))
        for storage in _local.marked:
            storage._torch_load_uninitialized = False
        return result
    finally:
        _local.pending, _local.marked = outer


# ---- copy.deepcopy --------------------------------------------------------------------------------

_original_deepcopy = _torch.Tensor.__deepcopy__


def _deepcopy(self, memo):
    if self.device.type != DEVICE_TYPE or type(self) is not _torch.Tensor:
        return _original_deepcopy(self, memo)
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                           "protocol at the moment")
    if id(self) in memo:
        return memo[id(self)]
    import copy
    with _torch.no_grad():
        new = self.clone()
    new.requires_grad_(self.requires_grad)
    if self.grad is not None:
        new.grad = copy.deepcopy(self.grad, memo)
    memo[id(self)] = new
    return new


def install():
    # Before the CPU tagger (10), which would tag the host copies "cpu"; it answers for marked ones only.
    _torch.serialization.register_package(5, _tag, _restore)
    _torch.Tensor._reduce_ex_internal = _reduce_ex_internal
    _torch.Tensor.__deepcopy__ = _deepcopy
    _torch._utils._rebuild_tensor = _rebuild_tensor
    _ser._save = _sharing_copies(_ser._save)
    _ser._legacy_save = _sharing_copies(_ser._legacy_save)
    _ser._legacy_load = _legacy_load
