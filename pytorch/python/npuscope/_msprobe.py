"""msprobe's dump of a PyTorch script, recorded under `npuscope run --dump stats|tensor` (Note [msprobe
fragments] in pytorch/src/msprobe_fragments.cpp; docs/compare.md "msprobe names in npuscope's dumps").

As msprobe's L1 dump does, the APIs of _msprobe_apis (torch.nn.functional, torch.Tensor's methods, torch's
functions, torch._VF's, torch.distributed) are wrapped: an outermost call (not one an API makes inside
another) becomes a host range "Functional.conv2d.{n}.forward" of the trace, with its arguments and results described as
msprobe's dump.json describes them (tensors by dtype, shape, requires_grad and device address: their
statistics and data are the kernels' TENSOR rows) and its Python call stack; a hook on its output's
autograd node records "....backward" when the node ran. Module calls get their arguments, their
parameters, the gradients of their inputs and outputs ("Module.{path}.{Class}.backward.{n}") and of their
parameters ("Module.{path}.{Class}.parameters_grad.{n}"). Nothing is wrapped unless the script is dumped.
"""
import linecache as _linecache
import json as _json
import math as _math
import os as _os
import sys as _sys
import threading as _threading

import torch as _torch

from npuscope import _msprobe_apis as _apis

_ops = _torch.ops.npuscope
_tls = _threading.local()  # .busy: inside a wrapped call or a recording hook of this thread
_LOW_RISK = frozenset(_apis.LOW_RISK)
_DTYPE_KEYS = ("dtype", "output_dtype")  # msprobe describes these keyword arguments as torch.dtype
_OWN_FILES = (__file__.rstrip("c"),)
_DEVICE_TYPE = "privateuseone"
_enabled = False


def enabled():
    """True when the script's API calls are recorded (it runs under `npuscope run --dump`)."""
    return _enabled


# ---- describing arguments as msprobe's dump.json does ---------------------------------------------

class _Description:
    """Arguments in msprobe's form, each tensor of the device with the address of its first element as
    the kernels saw it (TENSOR.address)."""

    def value(self, v, key=None):
        if isinstance(v, _torch.Tensor):
            d = {"type": "torch.Tensor", "dtype": str(v.dtype), "shape": list(v.shape),
                 "requires_grad": bool(v.requires_grad)}
            if v.device.type == _DEVICE_TYPE and v.numel() > 0:
                d["address"] = v.data_ptr()
                if not v.is_contiguous():  # a view of its buffer in another order: how to read it
                    d["stride"] = list(v.stride())
            return d
        if key in _DTYPE_KEYS and isinstance(v, _torch.dtype):
            return {"type": "torch.dtype", "value": str(v)}
        if key == "device" and isinstance(v, (_torch.device, int, str)):
            return {"type": "torch.device", "value": str(v)}
        if isinstance(v, bool):
            return {"type": "bool", "value": v}
        if isinstance(v, (int, str)):
            return {"type": type(v).__name__, "value": v}
        if isinstance(v, float):
            return {"type": "float", "value": v if _math.isfinite(v) else str(v)}
        if isinstance(v, slice):
            return {"type": "slice", "value": [None if x is None else int(x) for x in (v.start, v.stop, v.step)]}
        if v is Ellipsis:
            return {"type": "ellipsis", "value": "..."}
        if isinstance(v, _torch.Size):
            return {"type": "torch.Size", "value": [int(x) for x in v]}
        if isinstance(v, (list, tuple)):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {str(k): self.value(x, k) for k, x in v.items()}
        return None  # msprobe leaves other objects out (null)

    @staticmethod
    def json(structure):
        return _json.dumps(structure, separators=(",", ":"))


_frames = {}  # (code, line) -> msprobe's text of the frame
_AUTOGRAD_FUNCTION = _os.path.join("torch", "autograd", "function.py")
_CHECKPOINT = _os.path.join("torch", "utils", "checkpoint.py")
_RECOMPUTE_FUNCTIONS = frozenset(("backward", "recompute_fn", "checkpoint_function_backward"))  # _recomputes' names


def _stack():
    """The Python stack as msprobe's stack.json writes it, innermost first, ";\\n" between, without the
    frames of this file."""
    return _call_site(_sys._getframe(1))[0]


def _call_site(f):
    """(_stack() from frame f, whether f runs in a recomputed forward).

    Note [msprobe recompute]: msprobe's dumps of 2024 to May 2026 mark each forward entry with
    "is_recompute" (data_collector.set_is_recomputable), true when the call's stack says activation
    checkpointing is recomputing a forward in the backward pass (pytorch/common/utils.py
    is_recomputation): a frame of a function `recompute_fn` in torch/utils/checkpoint.py (torch 2's), or of
    a function `backward` (megatron's `checkpoint_function_backward` too) whose caller, or its caller, is
    in torch/autograd/function.py: torch.utils.checkpoint's reentrant CheckpointFunction.backward, run by
    autograd's BackwardCFunction.apply. The same rule here, on the same frames: the non-reentrant
    checkpoint of torch 1.13 (use_reentrant=False) recomputes in a saved-tensor hook, which msprobe did
    not mark, and neither does this."""
    out = []
    recompute = False
    while f is not None:
        code = f.f_code
        key = (code, f.f_lineno)
        text = _frames.get(key)
        if text is None:
            line = _linecache.getline(code.co_filename, f.f_lineno).strip()
            text = _frames[key] = "File %s, line %d, in %s, \n %s" % (code.co_filename, f.f_lineno, code.co_name, line)
        if code.co_filename not in _OWN_FILES:
            out.append(text)
        if not recompute and code.co_name in _RECOMPUTE_FUNCTIONS:  # a set lookup per frame: every call walks its stack
            recompute = _recomputes(f)
        f = f.f_back
    return ";\n".join(out), recompute


def _recomputes(f):
    name = f.f_code.co_name
    if name == "recompute_fn":
        return f.f_code.co_filename.endswith(_CHECKPOINT)
    if name != "backward" and not (name == "checkpoint_function_backward" and "megatron" in f.f_code.co_filename):
        return False
    callers = (f.f_back, f.f_back.f_back if f.f_back is not None else None)
    return any(c is not None and c.f_code.co_filename.endswith(_AUTOGRAD_FUNCTION) for c in callers)


def _described(d, entry):
    """A forward entry's JSON and its call's stack, the entry marked "is_recompute" when its call runs in a
    recomputed forward (Note [msprobe recompute]; msprobe writes false on the others, which readers take
    as the flag's absence)."""
    stack, recompute = _call_site(_sys._getframe(1))
    if recompute:
        entry["is_recompute"] = True
    return d.json(entry), stack


def _first_tensor(output):
    """The tensor whose autograd node msprobe hooks for an API's backward (its output's first)."""
    v = output
    while not isinstance(v, _torch.Tensor):
        if isinstance(v, dict):
            v = next((x for x in v.values() if isinstance(x, _torch.Tensor)), None)
        elif isinstance(v, (list, tuple)) and v:
            v = v[0]
        else:
            return None
    return v


def _hook_backward(name, output):
    t = _first_tensor(output)
    if t is None or not (t.requires_grad and _torch.is_grad_enabled()) or t.grad_fn is None:
        return
    backward = name[:-len(".forward")] + ".backward"

    def hook(grad_inputs, grad_outputs):
        _record_fragment(backward, lambda d: {"input": d.value(grad_outputs), "output": d.value(grad_inputs)})

    t.grad_fn.register_hook(hook)


def _record_fragment(name, describe):
    busy = getattr(_tls, "busy", False)
    _tls.busy = True
    try:
        d = _Description()
        _ops.fragment(name, d.json(describe(d)), _stack())
    finally:
        _tls.busy = busy


# ---- API calls ------------------------------------------------------------------------------------

def _wrap(prefix, func):
    low = prefix.rsplit(".", 1)[1] in _LOW_RISK

    def api(*args, **kwargs):
        if getattr(_tls, "busy", False):
            return func(*args, **kwargs)
        _tls.busy = True
        try:
            op = _ops.api_begin(prefix)
            if low:  # counted, not dumped (msprobe's risk_level FOCUS)
                try:
                    return func(*args, **kwargs)
                finally:
                    _ops.api_end(op, "", "")
            d = _Description()
            entry = {"input_args": d.value(args), "input_kwargs": d.value(kwargs)}
            try:
                out = func(*args, **kwargs)
            except BaseException:
                _ops.api_end(op, "", "")
                raise
            entry["output"] = d.value(out if isinstance(out, (list, tuple)) else [out])
            name = _ops.api_end(op, *_described(d, entry))
            if name:
                _hook_backward(name, out)
            return out
        finally:
            _tls.busy = False

    for attr in ("__name__", "__qualname__", "__doc__"):
        try:
            setattr(api, attr, getattr(func, attr))
        except (AttributeError, TypeError):
            pass
    api.__wrapped__ = func
    return api


def _owner_and_attr(module, name):
    if "." in name:
        sub, name = name.rsplit(".", 1)
        module = getattr(module, sub, None)
    return module, name


def _wrap_all():
    import torch.distributed as dist
    groups = [("Functional", _torch.nn.functional, _apis.FUNCTIONAL), ("Tensor", _torch.Tensor, _apis.TENSOR),
              ("Torch", _torch, _apis.TORCH), ("VF", _torch._VF, _apis.VF)]
    if dist.is_available():
        groups.append(("Distributed", dist, _apis.DISTRIBUTED))
    for prefix, module, names in groups:
        for name in names:
            owner, attr = _owner_and_attr(module, name)
            func = getattr(owner, attr, None) if owner is not None else None
            if not callable(func) or getattr(func, "_npuscope_api", False):
                continue
            try:
                wrapper = _wrap("%s.%s" % (prefix, name.rsplit(".", 1)[-1]), func)
                wrapper._npuscope_api = True
                setattr(owner, attr, wrapper)
            except (AttributeError, TypeError):
                pass  # a read-only attribute: msprobe cannot wrap it either


# ---- module calls ---------------------------------------------------------------------------------

def module_inputs(args, kwargs=None):
    """What a module call's pre-hook keeps for its entry: the description of its arguments, and them."""
    d = _Description()
    return d, {"input_args": d.value(args), "input_kwargs": d.value(kwargs or {})}, _tensors([args, kwargs])


_grad_calls = {}  # "Module.fc.Linear" -> [n, first parameter] of its parameters_grad entries this step
_grad_step = [-1]


def module_end(module, op, described, output):
    """Ends a module call's range with its arguments, results and parameters; hooks its gradients."""
    d, entry, inputs = described
    busy = getattr(_tls, "busy", False)
    _tls.busy = True
    try:
        entry["output"] = d.value(output if isinstance(output, (list, tuple)) else [output])
        params = dict(module.named_parameters(recurse=False))
        if params:
            entry["parameters"] = {k: d.value(p) for k, p in params.items()}
        name = _ops.api_end(op, *_described(d, entry))
        if name and _torch.is_grad_enabled():
            _hook_module_backward(name, inputs, output)
            _hook_parameters(name.rsplit(".", 2)[0], params)
    finally:
        _tls.busy = busy


def _tensors(structure):
    if isinstance(structure, _torch.Tensor):
        return [structure]
    if isinstance(structure, (list, tuple)):
        return [t for x in structure for t in _tensors(x)]
    if isinstance(structure, dict):
        return [t for x in structure.values() for t in _tensors(x)]
    return []


def _hook_module_backward(name, inputs, output):
    """Module.{...}.backward.{n}: input the gradients of the call's outputs, output those of its inputs,
    each recorded by a hook on its tensor when the backward pass computed it."""
    backward = name.replace(".forward.", ".backward.")
    outputs = _tensors(output)
    for slot, tensors in (("input", outputs), ("output", inputs)):
        for i, t in enumerate(tensors):
            if not t.requires_grad:
                continue

            def hook(grad, slot=slot, i=i, count=len(tensors)):
                def describe(d):
                    values = [None] * count
                    values[i] = d.value(grad)
                    return {slot: values}
                _record_fragment(backward, describe)
            t.register_hook(hook)


def _hook_parameters(module_entry, params):
    for pname, p in params.items():
        if not p.requires_grad:
            continue
        owners = getattr(p, "_npuscope_grad_hooks", None)
        if owners is None:
            owners = p._npuscope_grad_hooks = set()
        if module_entry in owners:
            continue
        owners.add(module_entry)
        accumulate = p.expand_as(p).grad_fn.next_functions[0][0]

        def hook(*_, module_entry=module_entry, pname=pname, param=p):
            step = int(_ops.current_step())
            if step != _grad_step[0]:
                _grad_step[0] = step
                _grad_calls.clear()
            call = _grad_calls.setdefault(module_entry, [-1, pname])
            if call[1] == pname:
                call[0] += 1
            _record_fragment("%s.parameters_grad.%d" % (module_entry, call[0]),
                             lambda d: {pname: [d.value(param.grad)]})
        accumulate.register_hook(hook)
        _keep.append(accumulate)  # the hook lives as long as its node: keep the node


_keep = []


def start():
    """Wraps the APIs (once), when the profiler asked for the tensors, unless NPUSCOPE_MSPROBE_APIS=0 (the
    dump's entries are then the aten ops', Aten.{op}.{n}.forward)."""
    global _enabled
    if _enabled or _os.environ.get("NPUSCOPE_MSPROBE_APIS", "1") == "0" or not bool(_ops.dump_requested()):
        return _enabled
    _wrap_all()
    _enabled = True
    return True
