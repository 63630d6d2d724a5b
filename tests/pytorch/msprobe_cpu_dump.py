"""A CPU PyTorch run dumped in msprobe's layout, as msprobe's statistics dump (level mix) would write it:
the reference test_msprobe_names.py sets npuscope's emulated dump against. Independent of npuscope's own
recorder (npuscope/_msprobe.py): it wraps the same APIs (npuscope._msprobe_apis: msprobe's lists) and
computes each tensor's statistics in Python, where msprobe does. Forward entries carry "is_recompute" as
msprobe's dumps of 2024 to May 2026 do (true where activation checkpointing recomputes the call).

    import msprobe_cpu_dump as dumper
    dumper.start()                      # before the model is built
    ... forward, backward, optimizer step; dumper.step() after each optimizer step
    dumper.write(DIR)                   # DIR/step{S}/rank0/{dump,construct}.json

MSPROBE_SUMMARY_MODE=md5 adds each tensor's "md5", as msprobe's summary_mode md5 does.
"""
import json
import os
import sys
import threading
import zlib

import torch

from npuscope import _msprobe_apis as apis

_tls = threading.local()
_summary_mode = ["statistics"]  # or "md5" (MSPROBE_SUMMARY_MODE=md5): each tensor's CRC-32 too
_steps = [{}]  # per step: {entry: record}
_construct = [{}]
_api_calls, _module_calls, _grad_calls = {}, {}, {}
_names = {}  # module -> "path.Class"
_open = []  # open module entries


def _stats(t):
    d = {"type": "torch.Tensor", "dtype": str(t.dtype), "shape": list(t.shape)}
    v = t.detach()
    if v.numel() == 0 or v.is_complex():
        d.update(Max=None, Min=None, Mean=None, Norm=None)
    else:
        f = v.double()
        d.update(Max=f.max().item(), Min=f.min().item(), Mean=f.mean().item(), Norm=f.norm().item())
    d["requires_grad"] = bool(t.requires_grad)
    if _summary_mode[0] == "md5":  # msprobe's compute_crc32_from_tensor: the contiguous bytes as stored
        raw = v.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if v.numel() else b""
        d["md5"] = "%08x" % zlib.crc32(raw)
    return d


def _describe(v, key=None):
    if isinstance(v, torch.Tensor):
        return _stats(v)
    if key in ("dtype", "output_dtype") and isinstance(v, torch.dtype):
        return {"type": "torch.dtype", "value": str(v)}
    if key == "device" and isinstance(v, (torch.device, int, str)):
        return {"type": "torch.device", "value": str(v)}
    if isinstance(v, (bool, int, str)):
        return {"type": type(v).__name__, "value": v}
    if isinstance(v, float):
        return {"type": "float", "value": v}
    if isinstance(v, slice):
        return {"type": "slice", "value": [v.start, v.stop, v.step]}
    if isinstance(v, torch.Size):
        return {"type": "torch.Size", "value": list(v)}
    if isinstance(v, (list, tuple)):
        return [_describe(x) for x in v]
    if isinstance(v, dict):
        return {k: _describe(x, k) for k, x in v.items()}
    return None


def _is_recompute():
    """msprobe's is_recomputation (pytorch/common/utils.py) on this call's frames, outermost last: a
    `recompute_fn` of torch/utils/checkpoint.py, or a `backward` called from torch/autograd/function.py
    (directly or one frame further)."""
    frames = []
    f = sys._getframe(1)
    while f is not None:
        frames.append((f.f_code.co_name, f.f_code.co_filename))
        f = f.f_back
    for i, (function, filename) in enumerate(frames):
        if function == "recompute_fn" and filename.endswith("torch/utils/checkpoint.py"):
            return True
        if function == "backward" or function == "checkpoint_function_backward" and "megatron" in filename:
            if any(j < len(frames) and frames[j][1].endswith("torch/autograd/function.py") for j in (i + 1, i + 2)):
                return True
    return False


def _record(name, record, parent=None, merge=False):
    data = _steps[-1]
    if merge and name in data:
        for key, value in record.items():
            old = data[name].get(key)
            if isinstance(old, list) and isinstance(value, list):
                data[name][key] = [b if a is None else a for a, b in zip(old, value)] + value[len(old):]
            else:
                data[name].setdefault(key, value)
        return
    data[name] = record
    if parent is not False:
        _construct[-1][name] = parent


class _Busy:
    def __enter__(self):
        self.was = getattr(_tls, "busy", False)
        _tls.busy = True

    def __exit__(self, *exc):
        _tls.busy = self.was


def _wrap(prefix, func):
    low = prefix.rsplit(".", 1)[1] in apis.LOW_RISK

    def api(*args, **kwargs):
        if getattr(_tls, "busy", False):
            return func(*args, **kwargs)
        with _Busy():
            n = _api_calls.get(prefix, 0)
            _api_calls[prefix] = n + 1
            if low:
                return func(*args, **kwargs)
            name = "%s.%d.forward" % (prefix, n)
            record = {"input_args": _describe(args), "input_kwargs": _describe(kwargs)}
            out = func(*args, **kwargs)
            record["output"] = _describe(out if isinstance(out, (list, tuple)) else [out])
            record["is_recompute"] = _is_recompute()
            parent = _open[-1] if _open else None
            _record(name, record, parent)
            first = out
            while not isinstance(first, torch.Tensor):
                first = first[0] if isinstance(first, (list, tuple)) and first else None
                if first is None:
                    return out
            if first.requires_grad and torch.is_grad_enabled() and first.grad_fn is not None:
                backward = "%s.%d.backward" % (prefix, n)
                bparent = parent.replace(".forward.", ".backward.") if parent else None

                def hook(grad_inputs, grad_outputs):
                    with _Busy():
                        _record(backward, {"input": _describe(grad_outputs), "output": _describe(grad_inputs)},
                                bparent)
                first.grad_fn.register_hook(hook)
            return out
    return api


def _tensors(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in _tensors(x)]
    if isinstance(v, dict):
        return [t for x in v.values() for t in _tensors(x)]
    return []


def _pre_hook(module, inputs):
    if not _open and module not in _names:
        for path, m in module.named_modules():
            _names[m] = "%s.%s" % (path, type(m).__name__) if path else type(m).__name__
    base = _names.setdefault(module, type(module).__name__)
    n = _module_calls.get(base, 0)
    _module_calls[base] = n + 1
    name = "Module.%s.forward.%d" % (base, n)
    with _Busy():
        module._dump_inputs = (name, _open[-1] if _open else None, _describe(inputs), _tensors(inputs))
    _open.append(name)


def _hook(module, inputs, output):
    _open.pop()
    name, parent, args, in_tensors = module._dump_inputs
    with _Busy():
        params = dict(module.named_parameters(recurse=False))
        record = {"input_args": args, "input_kwargs": {},
                  "output": _describe(output if isinstance(output, (list, tuple)) else [output])}
        if params:
            record["parameters"] = {k: _describe(p) for k, p in params.items()}
        record["is_recompute"] = _is_recompute()
        _record(name, record, parent)
        if not torch.is_grad_enabled():
            return
        backward = name.replace(".forward.", ".backward.")
        bparent = parent.replace(".forward.", ".backward.") if parent else None
        for slot, tensors in (("input", _tensors(output)), ("output", in_tensors)):
            for i, t in enumerate(tensors):
                if t.requires_grad:
                    def grad_hook(g, slot=slot, i=i, count=len(tensors)):
                        with _Busy():
                            values = [None] * count
                            values[i] = _describe(g)
                            _record(backward, {slot: values}, bparent, merge=True)
                    t.register_hook(grad_hook)
        owner = name.rsplit(".", 2)[0]
        for pname, p in params.items():
            if p.requires_grad and not getattr(p, "_dump_hooked_" + owner.replace(".", "_"), False):
                setattr(p, "_dump_hooked_" + owner.replace(".", "_"), True)
                acc = p.expand_as(p).grad_fn.next_functions[0][0]

                def param_hook(*_, owner=owner, pname=pname, p=p):
                    call = _grad_calls.setdefault(owner, [-1, pname])
                    if call[1] == pname:
                        call[0] += 1
                    with _Busy():
                        _record("%s.parameters_grad.%d" % (owner, call[0]), {pname: [_describe(p.grad)]}, False,
                                merge=True)
                acc.register_hook(param_hook)
                _keep.append(acc)


_keep = []


def start():
    import torch.distributed as dist
    _summary_mode[0] = os.environ.get("MSPROBE_SUMMARY_MODE", "statistics")
    groups = [("Functional", torch.nn.functional, apis.FUNCTIONAL), ("Tensor", torch.Tensor, apis.TENSOR),
              ("Torch", torch, apis.TORCH), ("VF", torch._VF, apis.VF), ("Distributed", dist, apis.DISTRIBUTED)]
    for prefix, module, names in groups:
        for name in names:
            owner, attr = module, name
            if "." in name:
                sub, attr = name.rsplit(".", 1)
                owner = getattr(module, sub, None)
            func = getattr(owner, attr, None) if owner is not None else None
            if callable(func):
                try:
                    setattr(owner, attr, _wrap("%s.%s" % (prefix, attr), func))
                except (AttributeError, TypeError):
                    pass
    torch.nn.modules.module.register_module_forward_pre_hook(_pre_hook)
    torch.nn.modules.module.register_module_forward_hook(_hook)


def step():
    _steps.append({})
    _construct.append({})
    _api_calls.clear()
    _module_calls.clear()
    _grad_calls.clear()


def write(directory):
    for s, (data, construct) in enumerate(zip(_steps, _construct)):
        if not data:
            continue
        d = os.path.join(directory, "step%d" % s, "rank0")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "dump.json"), "w") as f:
            json.dump({"task": "statistics", "level": "mix", "framework": "pytorch", "dump_data_dir": None,
                       "data": data}, f, indent=1)
        with open(os.path.join(d, "construct.json"), "w") as f:
            json.dump(construct, f, indent=1)
