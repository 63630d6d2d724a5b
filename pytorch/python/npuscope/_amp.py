"""npuscope.torch.amp: mixed precision and dynamic loss scaling on the emulated NPU, as torch_npu's amp.

    scaler = npuscope.torch.amp.GradScaler()
    for x, y in data:
        with npuscope.torch.amp.autocast():    # npuscope/_autocast.py
            loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)      # skipped when the gradients overflowed
        scaler.update()             # the scale backs off after an overflow, grows after clean steps

How an overflow is found depends on the device's overflow mode (npuscope.torch.set_overflow_mode):
in saturation mode the device's float status, cleared when the loss is scaled and read once the
gradients are unscaled (torch_npu's npu_get_float_status); in inf_nan mode the gradients themselves
are checked for inf and NaN. Under `npuscope run` every decision goes into the trace (LOSS_SCALE:
the scale, and whether the step was skipped), and `npuscope analyze` lists the skipped steps with the
op that overflowed first in each.
"""
import torch as _torch

from npuscope._autocast import autocast, custom_bwd, custom_fwd, get_autocast_dtype, is_autocast_enabled  # noqa: F401

__all__ = ["GradScaler", "autocast", "custom_fwd", "custom_bwd", "is_autocast_enabled", "get_autocast_dtype"]


class _ScaledLoss(_torch.autograd.Function):
    """loss * scale, with the scale applied where the gradient starts.

    The forward value is computed on the host in float64 and rounded once to the loss's dtype: under
    force_fp16 a device Mul would compute it in float16 and overflow for any scale above 65504 / loss,
    where torch_npu keeps the scaled loss in float32. The backward multiplies the incoming gradient by
    the scale on the device: the first op of the backward pass, so a scale too large for the gradients'
    compute dtype (float16: 65504; torch's default 65536 is one) overflows there, as on an NPU."""

    @staticmethod
    def forward(ctx, loss, scale):
        ctx.scale = scale
        value = loss.detach().to("cpu", _torch.float64) * scale
        return value.to(loss.dtype).to(loss.device)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


class GradScaler:
    """torch.cuda.amp.GradScaler's interface and defaults (init_scale 2**16, x0.5 on overflow, x2 after
    2000 clean steps), for the emulated NPU."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        if growth_factor <= 1.0:
            raise ValueError("GradScaler: growth_factor must be > 1, got %r" % (growth_factor,))
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError("GradScaler: backoff_factor must be in (0, 1), got %r" % (backoff_factor,))
        if growth_interval <= 0:
            raise ValueError("GradScaler: growth_interval must be a positive number of steps, got %r"
                             % (growth_interval,))
        self._enabled = bool(enabled)
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._optimizers = {}  # id(optimizer) -> {"unscaled": bool, "found_inf": bool}
        self._decision_step = None  # the step the pending decision belongs to

    # ---- the loop's calls -------------------------------------------------------------------------

    def scale(self, outputs):
        """outputs * scale (a tensor, or tensors in lists, tuples and dicts). In saturation mode this
        also clears the float status, so that what sets it next is this step's backward."""
        if not self._enabled:
            return outputs
        from npuscope import torch as npu
        if npu.get_overflow_mode() == "saturation":
            npu.clear_float_status()

        def apply(value):
            if isinstance(value, _torch.Tensor):
                npu._loss_scale[0] = self._scale  # what the grad probe's gradients carry
                return _ScaledLoss.apply(value, self._scale)
            if isinstance(value, (list, tuple)):
                return type(value)(apply(v) for v in value)
            if isinstance(value, dict):
                return {k: apply(v) for k, v in value.items()}
            raise TypeError("GradScaler.scale: expects tensors (or lists, tuples, dicts of them), got %r"
                            % (type(value),))
        return apply(outputs)

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale (once per step) and finds whether they
        overflowed."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["unscaled"]:
            raise RuntimeError("GradScaler.unscale_ was already called for this optimizer since the last update()")
        grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        found_inf = self._overflowed(grads)
        inverse = 1.0 / self._scale
        with _torch.no_grad():
            for g in grads:
                g.mul_(inverse)
        state["unscaled"] = True
        state["found_inf"] = found_inf

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(...) unless the gradients overflowed; then the step is skipped (it still ends
        the profiler's step, as an optimizer step would)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        from npuscope import torch as npu
        state = self._state(optimizer)
        if not state["unscaled"]:
            self.unscale_(optimizer)
        self._decision_step = npu.current_step()
        if state["found_inf"]:
            npu._ops.optimizer_step_skipped()
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """Backs the scale off after an overflow, grows it after growth_interval clean steps (or sets
        `new_scale`), and records the decision in the trace."""
        if not self._enabled:
            return
        from npuscope import torch as npu
        found_inf = any(s["found_inf"] for s in self._optimizers.values())
        used = self._scale
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, _torch.Tensor) else new_scale)
        elif found_inf:
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        step = npu.current_step() if self._decision_step is None else self._decision_step
        npu._ops.record_loss_scale(int(step), used, self._scale, bool(found_inf))
        self._optimizers.clear()
        self._decision_step = None

    # ---- torch's accessors --------------------------------------------------------------------------

    def get_scale(self):
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def get_growth_interval(self):
        return self._growth_interval

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state):
        if not self._enabled:
            return
        self._scale = float(state["scale"])
        self._growth_factor = float(state["growth_factor"])
        self._backoff_factor = float(state["backoff_factor"])
        self._growth_interval = int(state["growth_interval"])
        self._growth_tracker = int(state["_growth_tracker"])

    # ---- internals ------------------------------------------------------------------------------------

    def _state(self, optimizer):
        return self._optimizers.setdefault(id(optimizer), {"unscaled": False, "found_inf": False})

    def _overflowed(self, grads):
        from npuscope import torch as npu
        if not grads:
            return False
        if npu.get_overflow_mode() == "saturation":
            found = npu.get_float_status()  # saturated values are finite: only the status tells
            npu.clear_float_status()
            return found
        with _torch.no_grad():
            # The largest magnitudes, judged on the host: a device comparison with inf would itself
            # carry an inf through a Cast and be reported as an overflow.
            peaks = _torch.stack([g.detach().abs().max().float() for g in grads]).cpu()
            return not bool(_torch.isfinite(peaks).all())
