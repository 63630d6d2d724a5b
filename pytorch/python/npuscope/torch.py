"""The emulated NPU as a PyTorch device, the way torch_npu makes an Ascend NPU one.

    import torch
    import npuscope.torch as npu
    dev = npu.device()                     # torch.device("privateuseone:0")
    x = torch.randn(8, 16).to(dev)         # or x.npu()
    y = torch.nn.Linear(16, 4).npu()(x)
    npu.synchronize(); print(npu.max_memory_allocated())

Importing this module loads the device (PyTorch's PrivateUse1 backend: the device string is
"privateuseone" in PyTorch 1.13). Ops with a native NPU kernel run as tasks of the emulated device;
the others run through a CPU fallback, recorded as AI CPU tasks (fallback_ops() counts them).
Settings come from the environment (NPUSCOPE_SPEC, NPUSCOPE_PRECISION_MODE, NPUSCOPE_OVERFLOW_MODE,
NPUSCOPE_NUM_DEVICES) or from set_spec / set_precision_mode / set_overflow_mode. NPUSCOPE_GOLDEN=1 makes
the script's golden run (every device op on its CPU golden kernel) and NPUSCOPE_PERTURB plants errors
(docs/compare.md: `npuscope compare -- /usr/bin/python3 script.py` sets both).
"""
import atexit as _atexit
import contextlib as _contextlib
import os as _os
import sys as _sys
import threading as _threading
import weakref as _weakref

import torch as _torch

_LIBRARY = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "libnpuscope_torch.so")
if not _os.path.exists(_LIBRARY):
    raise ImportError("npuscope.torch: %s is missing; build npuscope (make) and use PYTHONPATH=build/python, "
                      "or install it (cmake --install)" % _LIBRARY)
_torch.ops.load_library(_LIBRARY)
_ops = _torch.ops.npuscope

DEVICE_TYPE = "privateuseone"

__all__ = [
    "DEVICE_TYPE", "device", "device_count", "is_available", "current_device", "set_device", "synchronize",
    "Stream", "Event", "stream", "current_stream", "default_stream",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
    "reset_peak_memory_stats", "empty_cache",
    "set_spec", "get_spec", "set_precision_mode", "get_precision_mode", "set_overflow_mode", "get_overflow_mode",
    "config", "get_float_status", "clear_float_status", "fallback_ops", "reset_fallback_ops",
    "step", "current_step", "observing", "amp",
]


def _index(device=None):
    """A device index from None (the current device), an int, "privateuseone:N", "npu:N" or a torch.device."""
    if device is None:
        return -1
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        if device.startswith("npu"):
            device = DEVICE_TYPE + device[3:]
        device = _torch.device(device)
    if isinstance(device, _torch.device):
        if device.type != DEVICE_TYPE:
            raise ValueError("npuscope.torch: %s is not an emulated NPU (use %s:N)" % (device, DEVICE_TYPE))
        return -1 if device.index is None else device.index
    raise TypeError("npuscope.torch: a device is an int, a string or a torch.device, not %r" % (device,))


def device(index=None):
    """torch.device("privateuseone:N") for device `index` (default: the current device)."""
    i = _index(index)
    return _torch.device(DEVICE_TYPE, current_device() if i < 0 else i)


def device_count():
    return int(_ops.device_count())


def is_available():
    return device_count() > 0


def current_device():
    return int(_ops.current_device())


def set_device(device):
    i = _index(device)
    _ops.set_device(current_device() if i < 0 else i)


def synchronize(device=None):
    """Waits for every task queued on the device (raises the first kernel fault, if any)."""
    _ops.synchronize(_index(device))


# ---- memory ---------------------------------------------------------------------------------------

_STAT_KEYS = ("allocated_bytes", "reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes", "capacity_bytes",
              "num_allocs", "num_frees", "num_segment_releases")


def memory_stats(device=None):
    """The caching allocator's figures: allocated / reserved bytes and their peaks, capacity, counts."""
    return dict(zip(_STAT_KEYS, _ops.memory_stats(_index(device))))


def memory_allocated(device=None):
    return memory_stats(device)["allocated_bytes"]


def max_memory_allocated(device=None):
    return memory_stats(device)["peak_allocated_bytes"]


def memory_reserved(device=None):
    return memory_stats(device)["reserved_bytes"]


def max_memory_reserved(device=None):
    return memory_stats(device)["peak_reserved_bytes"]


def reset_peak_memory_stats(device=None):
    _ops.reset_peak_memory_stats(_index(device))


def empty_cache(device=None):
    """Returns the cached, unused memory segments to the device."""
    _ops.empty_cache(_index(device))


# ---- spec and numerics (CANN's names) -------------------------------------------------------------

def set_spec(preset):
    """Emulates another NPU ("ascend910b", "ascend910", "ascend310p", "tiny" or a spec file): before the
    first tensor is on the device."""
    _ops.set_spec(str(preset))


def get_spec(device=None):
    return _ops.get_spec(_index(device))


def set_precision_mode(mode, device=None):
    """force_fp16, allow_fp32_to_fp16, allow_mix_precision or must_keep_origin_dtype (CANN's names)."""
    _ops.set_precision_mode(str(mode), _index(device))


def get_precision_mode(device=None):
    return _ops.get_precision_mode(_index(device))


def set_overflow_mode(mode, device=None):
    """inf_nan (IEEE results) or saturation (clamped, and the float status raised)."""
    _ops.set_overflow_mode(str(mode), _index(device))


def get_overflow_mode(device=None):
    return _ops.get_overflow_mode(_index(device))


class _Config:
    """torch_npu's torch.npu.config: `allow_internal_format` (default False) keeps convolution operands in
    their private formats (NC1HWC0, FRACTAL_Z) between ops, so each is converted by a TransData once
    instead of before and after every op (emulated specs with private formats: the Ascend presets)."""

    @property
    def allow_internal_format(self):
        return bool(_ops.get_allow_internal_format())

    @allow_internal_format.setter
    def allow_internal_format(self, on):
        _ops.set_allow_internal_format(bool(on))


config = _Config()


def get_float_status(device=None):
    """True when a kernel saturated since the last clear_float_status() (saturation mode), after waiting
    for the queued kernels, as torch_npu's npu_get_float_status reads the status register."""
    return bool(_ops.get_float_status(_index(device)))


def clear_float_status(device=None):
    _ops.clear_float_status(_index(device))


# ---- streams and events ---------------------------------------------------------------------------

class Stream:
    """A stream of the device (an emulator stream): tasks on two streams overlap in modelled time."""

    def __init__(self, device=None, _id=None):
        i = _index(device)
        self.device_index = current_device() if i < 0 else i
        self.stream_id = int(_ops.new_stream(self.device_index)) if _id is None else int(_id)

    @property
    def device(self):
        return _torch.device(DEVICE_TYPE, self.device_index)

    def synchronize(self):
        _ops.synchronize_stream(self.device_index, self.stream_id)

    def query(self):
        self.synchronize()  # the emulator answers by waiting: the stream is then idle
        return True

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event):
        event.wait(self)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.device_index, self.stream_id) == (other.device_index,
                                                                                       other.stream_id)

    def __hash__(self):
        return hash((self.device_index, self.stream_id))

    def __repr__(self):
        return "<npuscope.torch.Stream device=%s:%d id=%d>" % (DEVICE_TYPE, self.device_index, self.stream_id)


def current_stream(device=None):
    i = _index(device)
    i = current_device() if i < 0 else i
    return Stream(i, _id=_ops.current_stream(i))


def default_stream(device=None):
    i = _index(device)
    return Stream(current_device() if i < 0 else i, _id=0)


@_contextlib.contextmanager
def stream(s):
    """Makes `s` the current stream of its device inside the block (None: no change)."""
    if s is None:
        yield
        return
    previous = current_stream(s.device_index)
    _ops.set_stream(s.device_index, s.stream_id)
    try:
        yield
    finally:
        _ops.set_stream(previous.device_index, previous.stream_id)


class Event:
    """An event of the device. elapsed_time() gives the modelled time between two events, in ms."""

    def __init__(self, enable_timing=False, device=None):
        i = _index(device)
        self.device_index = current_device() if i < 0 else i
        self._id = int(_ops.create_event(self.device_index))

    def record(self, stream=None):
        s = current_stream(self.device_index) if stream is None else stream
        _ops.record_event(self._id, s.stream_id)

    def wait(self, stream=None):
        s = current_stream(self.device_index) if stream is None else stream
        _ops.wait_event(self._id, s.stream_id)

    def synchronize(self):
        _ops.event_time_ns(self._id)

    def query(self):
        self.synchronize()
        return True

    def elapsed_time(self, end_event):
        start, end = _ops.event_time_ns(self._id), _ops.event_time_ns(end_event._id)
        if start < 0 or end < 0:
            raise RuntimeError("npuscope.torch.Event.elapsed_time: both events must be recorded first")
        return (end - start) / 1e6

    def __del__(self):
        try:
            _ops.destroy_event(self._id)
        except Exception:  # interpreter shutdown
            pass


# ---- fallback --------------------------------------------------------------------------------------

def fallback_ops():
    """{aten op name: calls} of the ops that ran through the CPU fallback (AI CPU tasks) so far."""
    names, counts = _ops.fallback_counts()
    return dict(zip(names, counts))


def reset_fallback_ops():
    _ops.reset_fallback_counts()


# ---- Tensor.npu(), Module.npu() -------------------------------------------------------------------

_device_of = device  # the methods below take a parameter named `device`, as torch_npu's do


def _tensor_npu(self, device=None, non_blocking=False, memory_format=_torch.preserve_format):
    return self.to(_device_of(device), non_blocking=non_blocking, memory_format=memory_format)


def _module_npu(self, device=None):
    target = _device_of(device)
    return self._apply(lambda t: t.to(target))


_torch.Tensor.npu = _tensor_npu
_torch.Tensor.is_npu = property(lambda self: self.device.type == DEVICE_TYPE)
_torch.nn.Module.npu = _module_npu

# torch.save / torch.load / copy.deepcopy / pickle of device tensors, with torch_npu's location tags
# (Note [Checkpoints of device tensors], npuscope/_serialization.py).
from npuscope import _serialization  # noqa: E402
_serialization.install()


# ---- profiling: what `npuscope run` sees of the script (Note [PyTorch observers]) ----------------
#
# Under `npuscope run` (NPUSCOPE_INJECTION set), importing this module installs the observers: every
# aten op, autograd function and optimizer call becomes a host range of the trace (the C++ side),
# and every module call one named as msprobe names it, "Module.{path}.{Class}.forward.{n}" (below).
# NPUSCOPE_TORCH_OBSERVE=0 leaves them out. Unprofiled, nothing is installed and nothing is paid.

def step():
    """Marks a step boundary: the step so far ends, the next begins with the next op. By default every
    optimizer.step() is one; once a script calls step(), only its own calls are."""
    _ops.step()


def current_step():
    """The number of the step in progress (0 before the first boundary)."""
    return int(_ops.current_step())


from npuscope import _msprobe  # noqa: E402

_observing = False
_module_names = _weakref.WeakKeyDictionary()  # module -> "layer1.0.conv1.Conv2d" (msprobe: path + class)
_open = _threading.local()  # .calls: [(module, op id)] of this thread's open module calls


def observing():
    """True when the profiler's observers are installed (the script runs under `npuscope run`)."""
    return _observing


def _name_modules(root):
    """Names every module of the tree under `root` by its attribute path, as msprobe does; the root
    itself by its class alone. With the grad probe on, hooks every parameter's gradient."""
    for path, module in root.named_modules():
        cls = type(module).__name__
        _module_names[module] = "%s.%s" % (path, cls) if path else cls
    if _grad_probe:
        for name, param in root.named_parameters():
            if param.requires_grad and param not in _probed:
                _probed.add(param)
                param.register_hook(_gradient_probe(name))


# ---- grad probe (msprobe's grad_probe; `npuscope run --grad-probe`) ------------------------------
#
# Every parameter of every model the script runs gets a tensor hook: when the backward pass produces
# its gradient, the gradient's norm, range, mean, zero share and non-finite counts go into the trace
# (GRADIENT), with the step and the loss scale it still carries. The hook returns nothing: the
# gradient is not changed.

_grad_probe = False
_probed = _weakref.WeakSet()
_loss_scale = [1.0]  # the scale the gradients carry: set by amp.GradScaler.scale


def _gradient_probe(name):
    def hook(grad):
        _ops.probe_gradient(name, grad, _loss_scale[0])
    return hook


def _module_pre_hook(module, inputs):
    calls = getattr(_open, "calls", None)
    if calls is None:
        calls = _open.calls = []
    # A module keeps its name once named: called again with no call open on this thread (a checkpointed
    # block recomputed in the backward pass) it is not the root of a tree of its own.
    if not calls and module not in _module_names:
        _name_modules(module)
    name = _module_names.get(module)
    if name is None:  # made after its root was named
        name = _module_names[module] = type(module).__name__
    described = _msprobe.module_inputs(inputs) if _msprobe.enabled() else None
    calls.append((module, _ops.module_enter(name), described))


def _module_hook(module, inputs, output):
    calls = getattr(_open, "calls", None)
    while calls:  # calls whose forward raised never reached this hook: they end with their caller
        owner, op, described = calls.pop()
        if owner is module:
            if described is None:
                _ops.module_exit(op)
            else:
                _msprobe.module_end(module, op, described, output)
            return


def _waiting_for_autograd(function):
    """`function` (torch.autograd.backward or grad) with its wait for the autograd engine's threads
    marked, so that the caller's clock resumes where the backward pass ended."""
    def wrapper(*args, **kwargs):
        _ops.wait_begin()
        try:
            return function(*args, **kwargs)
        finally:
            _ops.wait_end()
    wrapper.__wrapped__ = function
    wrapper.__doc__ = function.__doc__
    return wrapper


def _start_observing():
    global _observing
    if _observing:
        return
    device_count()  # starts the emulator's runtime, and with it the profiler, before the first step marker
    _ops.observe(True)
    _torch.nn.modules.module.register_module_forward_pre_hook(_module_pre_hook)
    _torch.nn.modules.module.register_module_forward_hook(_module_hook)
    # Tensor.backward calls torch.autograd.backward through the module attribute: one wrap serves both.
    _torch.autograd.backward = _waiting_for_autograd(_torch.autograd.backward)
    _torch.autograd.grad = _waiting_for_autograd(_torch.autograd.grad)
    _atexit.register(_ops.close_step)
    global _grad_probe
    _grad_probe = bool(_ops.grad_probe_requested())
    _msprobe.start()  # `npuscope run --dump`: msprobe's API and module entries (npuscope/_msprobe.py)
    _observing = True


if _os.environ.get("NPUSCOPE_INJECTION") and _os.environ.get("NPUSCOPE_TORCH_OBSERVE", "1") != "0":
    _start_observing()


from npuscope import _amp as amp  # noqa: E402  (npuscope.torch.amp.GradScaler, torch_npu's place for it)
_sys.modules[__name__ + ".amp"] = amp

# torch_npu registers torch.distributed's "hccl" backend when it is imported: so does the device.
if _torch.distributed.is_available():
    from npuscope import distributed as _distributed  # noqa: E402,F401
