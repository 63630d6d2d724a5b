"""npuscope.torch.amp.autocast: mixed precision on the emulated NPU, as torch_npu's torch.npu.amp.autocast.

    with npuscope.torch.amp.autocast():            # float16, torch_npu's default; or dtype=torch.bfloat16
        loss = loss_fn(model(x), y)                 # convolutions and matmuls in float16, losses in float32
    scaler.scale(loss).backward()

Note [Autocast on the device]
CUDA's autocast is a dispatch key, AutocastCUDA, that every CUDA tensor carries; torch_npu 1.11 adds
its own key to PyTorch. PyTorch 1.13 has no autocast key for PrivateUse1 (AutocastPrivateUse1 came in
2.0), so a device tensor passes no autocast layer. Here autocast is a TorchFunctionMode instead: every
call of a torch function, Tensor method or operator inside the block reaches `_Mode.__torch_function__`
first, which casts the operands by torch_npu's lists, the same lists as CUDA's (the names below are
the Python-level ones of PyTorch's AMP documentation, so that a functional composed in C++, such as
cross_entropy, is decided whole):
- lower precision (the block's dtype): convolutions, matmuls, linear, the RNN cells and whole RNNs;
- float32: the ops whose range or accuracy suffers in float16 (exp, log, pow, softmax, norms, losses,
  sums and cumulative ops);
- widest: ops of several operands that run in the widest float dtype among them (cat, stack, addcmul, ...).
Every other op runs in the dtype its operands have, as under CUDA autocast. Only floating-point device
tensors other than float64 are cast. As in CUDA's cast cache, the cast of a leaf that requires grad (a
weight) is made once per outermost block. binary_cross_entropy is refused, as on CUDA and the NPU.
What differs from CUDA: the ops run inside a C++ function that is not one of these (a TorchScript
module, torch.utils.checkpoint's recomputation in the backward pass) keep their dtype.
"""
import functools as _functools
import threading as _threading
import weakref as _weakref

import torch as _torch
from torch.overrides import TorchFunctionMode as _TorchFunctionMode

DEVICE_TYPE = "privateuseone"

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_enabled", "get_autocast_dtype"]

LOWER_PRECISION_OPS = frozenset([
    "__matmul__", "__rmatmul__", "addbmm", "addmm", "addmv", "addr", "baddbmm", "bmm", "chain_matmul",
    "multi_dot", "linalg_multi_dot", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "convolution", "conv_tbc", "gru_cell", "linear", "lstm_cell", "matmul", "mm", "mv",
    "prelu", "rnn_tanh_cell", "rnn_relu_cell", "einsum", "lstm", "gru", "rnn_tanh", "rnn_relu",
])
FLOAT32_OPS = frozenset([
    "__pow__", "__rdiv__", "__rpow__", "__rtruediv__", "acos", "asin", "binary_cross_entropy_with_logits", "cosh",
    "cosine_embedding_loss", "cdist", "cosine_similarity", "cross_entropy", "cross_entropy_loss", "cumprod",
    "cumsum", "dist", "erfinv", "exp", "expm1", "group_norm", "hinge_embedding_loss", "kl_div", "l1_loss",
    "layer_norm", "log", "log_softmax", "log10", "log1p", "log2", "margin_ranking_loss", "mse_loss",
    "multilabel_margin_loss", "multi_margin_loss", "nll_loss", "norm", "normalize", "pdist", "poisson_nll_loss",
    "pow", "prod", "reciprocal", "rsqrt", "sinh", "smooth_l1_loss", "huber_loss", "soft_margin_loss", "softmax",
    "softmin", "softplus", "sum", "renorm", "tan", "triplet_margin_loss", "logsumexp", "frobenius_norm",
    "nuclear_norm", "ctc_loss",
])
WIDEST_OPS = frozenset([
    "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sample", "grid_sampler", "index_put",
    "index_put_", "scatter_add", "tensordot", "cat", "stack",
])
BANNED_OPS = frozenset(["binary_cross_entropy"])

_state = _threading.local()  # .stack: [(enabled, dtype, cache_enabled)] of the open blocks; .cache; .mode


def _stack():
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


def is_autocast_enabled():
    """True inside an enabled autocast block of this thread."""
    stack = _stack()
    return bool(stack) and stack[-1][0]


def get_autocast_dtype():
    """The lower-precision dtype of the innermost block (float16 outside any)."""
    stack = _stack()
    return stack[-1][1] if stack else _torch.float16


def _eligible(t):
    return (isinstance(t, _torch.Tensor) and t.device.type == DEVICE_TYPE and t.is_floating_point()
            and t.dtype != _torch.float64)


def _cast_one(t, dtype):
    if not _eligible(t) or t.dtype == dtype:
        return t
    if t.is_leaf and t.requires_grad and _stack()[-1][2]:  # a weight: cast once per outermost block
        cache = _state.cache
        hit = cache.get(id(t))
        if hit is not None and hit[0]() is t and hit[1].dtype == dtype:
            return hit[1]
        cast = t.to(dtype)
        cache[id(t)] = (_weakref.ref(t), cast)
        return cast
    return t.to(dtype)


def _cast(value, dtype):
    if isinstance(value, _torch.Tensor):
        return _cast_one(value, dtype)
    if isinstance(value, (list, tuple)) and any(isinstance(v, _torch.Tensor) for v in value):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value


def _float_dtypes(values, found):
    for v in values:
        if _eligible(v):
            found.add(v.dtype)
        elif isinstance(v, (list, tuple)):
            _float_dtypes(v, found)
    return found


def _widest(values):
    """The widest float dtype of the eligible operands (two different ones: float32), or None."""
    found = _float_dtypes(values, set())
    if not found:
        return None
    return found.pop() if len(found) == 1 else _torch.float32


def _name(func):
    name = getattr(func, "__name__", "")
    if name == "__get__":  # a property (t.shape): never cast
        return ""
    return name


class _Mode(_TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        stack = _stack()
        if not stack or not stack[-1][0]:
            return func(*args, **kwargs)
        name = _name(func)
        if name in LOWER_PRECISION_OPS:
            dtype = stack[-1][1]
        elif name in FLOAT32_OPS:
            if kwargs.get("dtype") is not None:  # an explicit dtype wins, as on CUDA (softmax, sum, ...)
                return func(*args, **kwargs)
            dtype = _torch.float32
        elif name in WIDEST_OPS:
            dtype = _widest(list(args) + list(kwargs.values()))
            if dtype is None:
                return func(*args, **kwargs)
        elif name in BANNED_OPS:
            raise RuntimeError(
                "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast: they "
                "overflow in float16 on the NPU as on CUDA. Use binary_cross_entropy_with_logits or "
                "BCEWithLogitsLoss (they fuse the sigmoid and are safe), or run the loss outside autocast")
        else:
            return func(*args, **kwargs)
        return func(*_cast(args, dtype), **_cast(kwargs, dtype))


class autocast:
    """torch_npu's torch.npu.amp.autocast (and torch.cuda.amp.autocast): a context manager or decorator in
    which device ops run in `dtype` (float16 or bfloat16) or float32 by their lists (Note [Autocast on
    the device]). `enabled=False` turns it off inside an enabled block. `cache_enabled=False` casts the
    weights at every use."""

    def __init__(self, enabled=True, dtype=_torch.float16, cache_enabled=True):
        if dtype not in (_torch.float16, _torch.bfloat16):
            raise ValueError("npuscope.torch.amp.autocast: dtype must be torch.float16 or torch.bfloat16, got %s"
                             % (dtype,))
        self._enabled = bool(enabled)
        self._dtype = dtype
        self._cache_enabled = bool(cache_enabled)

    def __enter__(self):
        stack = _stack()
        if not stack:
            _state.cache = {}
            _state.mode = _Mode()
            _state.mode.__enter__()
        stack.append((self._enabled, self._dtype, self._cache_enabled))
        return self

    def __exit__(self, *exc):
        stack = _stack()
        stack.pop()
        if not stack:
            mode, _state.mode = _state.mode, None
            _state.cache = {}
            mode.__exit__(*exc)
        return False

    def __call__(self, function):
        @_functools.wraps(function)
        def decorated(*args, **kwargs):
            with autocast(self._enabled, self._dtype, self._cache_enabled):
                return function(*args, **kwargs)
        return decorated


def custom_fwd(fwd=None, *, cast_inputs=None):
    """torch.cuda.amp.custom_fwd for the device: the forward of a custom autograd Function runs with the
    caller's autocast state, or (cast_inputs=dtype) with its float inputs cast and autocast off."""
    if fwd is None:
        return _functools.partial(custom_fwd, cast_inputs=cast_inputs)

    @_functools.wraps(fwd)
    def decorated(*args, **kwargs):
        on = is_autocast_enabled()
        args[0]._fwd_used_autocast = (on, get_autocast_dtype()) if cast_inputs is None else (False, None)
        if cast_inputs is None or not on:
            return fwd(*args, **kwargs)
        with autocast(enabled=False):
            return fwd(*_cast(args, cast_inputs), **_cast(kwargs, cast_inputs))
    return decorated


def custom_bwd(bwd):
    """torch.cuda.amp.custom_bwd for the device: the backward runs with the forward's autocast state."""
    @_functools.wraps(bwd)
    def decorated(*args, **kwargs):
        on, dtype = getattr(args[0], "_fwd_used_autocast", (False, None))
        with autocast(enabled=on, dtype=dtype or _torch.float16):
            return bwd(*args, **kwargs)
    return decorated
