"""npuscope.torch.amp.autocast (Note [Autocast on the device], npuscope/_autocast.py): the dtype each op runs in,
nesting, the weight cast cache, custom_fwd/custom_bwd, and a training step with GradScaler."""
import unittest

import torch

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase, relative_error

amp = npu.amp


def _randn(*shape, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype).to(DEV)


class AutocastDtypesTest(DeviceTestCase):
    def test_lower_precision_ops_run_in_float16(self):
        x, w = _randn(4, 8), _randn(6, 8, seed=1)
        img, k = _randn(2, 3, 8, 8, seed=2), _randn(4, 3, 3, 3, seed=3)
        with amp.autocast():
            self.assertEqual(torch.nn.functional.linear(x, w).dtype, torch.float16)
            self.assertEqual((x @ w.t()).dtype, torch.float16)
            self.assertEqual(torch.mm(x, w.t()).dtype, torch.float16)
            self.assertEqual(x.matmul(w.t()).dtype, torch.float16)
            self.assertEqual(torch.bmm(x[None], w.t()[None]).dtype, torch.float16)
            self.assertEqual(torch.nn.functional.conv2d(img, k).dtype, torch.float16)
            self.assertEqual(torch.nn.Linear(8, 3).to(DEV)(x).dtype, torch.float16)

    def test_float32_ops_run_in_float32(self):
        h = _randn(4, 8, dtype=torch.float16)
        y = torch.randint(0, 8, (4,)).to(DEV)
        with amp.autocast():
            self.assertEqual(torch.softmax(h, 1).dtype, torch.float32)
            self.assertEqual(h.log_softmax(1).dtype, torch.float32)
            self.assertEqual(h.sum().dtype, torch.float32)
            self.assertEqual(torch.exp(h).dtype, torch.float32)
            self.assertEqual(torch.nn.functional.layer_norm(h, (8,)).dtype, torch.float32)
            self.assertEqual(torch.nn.functional.cross_entropy(h, y).dtype, torch.float32)
            self.assertEqual(torch.nn.functional.mse_loss(h, h).dtype, torch.float32)
            self.assertEqual(h.sum(dtype=torch.float16).dtype, torch.float16)  # an explicit dtype wins

    def test_widest_and_untouched_ops(self):
        h, f = _randn(3, dtype=torch.float16), _randn(3, seed=1)
        with amp.autocast():
            self.assertEqual(torch.cat([h, f]).dtype, torch.float32)
            self.assertEqual(torch.cat([h, h]).dtype, torch.float16)
            self.assertEqual(torch.addcmul(h, h, f).dtype, torch.float32)
            self.assertEqual(torch.relu(h).dtype, torch.float16)  # not listed: its operands' dtype
            self.assertEqual((f + 1).dtype, torch.float32)
            self.assertEqual(torch.arange(3).to(DEV).sum().dtype, torch.int64)  # only floats are cast

    def test_bfloat16_nesting_and_outside(self):
        x, w = _randn(4, 8), _randn(6, 8, seed=1)
        self.assertEqual(torch.nn.functional.linear(x, w).dtype, torch.float32)
        with amp.autocast(dtype=torch.bfloat16):
            self.assertTrue(amp.is_autocast_enabled())
            self.assertEqual(torch.nn.functional.linear(x, w).dtype, torch.bfloat16)
            with amp.autocast(enabled=False):
                self.assertFalse(amp.is_autocast_enabled())
                self.assertEqual(torch.nn.functional.linear(x, w).dtype, torch.float32)
            with amp.autocast(dtype=torch.float16):
                self.assertEqual(torch.nn.functional.linear(x, w).dtype, torch.float16)
            self.assertEqual(torch.nn.functional.linear(x, w).dtype, torch.bfloat16)
        self.assertFalse(amp.is_autocast_enabled())
        self.assertEqual(torch.nn.functional.linear(x, w).dtype, torch.float32)

        @amp.autocast()
        def decorated():
            return torch.nn.functional.linear(x, w)
        self.assertEqual(decorated().dtype, torch.float16)
        with self.assertRaises(ValueError):
            amp.autocast(dtype=torch.float32)

    def test_values_are_the_float16_computation(self):
        x, w = _randn(16, 32), _randn(8, 32, seed=1)
        with amp.autocast():
            y = torch.nn.functional.linear(x, w)
        ref = torch.nn.functional.linear(x.cpu().half().float(), w.cpu().half().float()).half()
        self.assertLess(relative_error(y, ref), 2e-3)

    def test_cpu_tensors_are_not_cast(self):
        x, w = torch.randn(4, 8), torch.randn(6, 8)
        with amp.autocast():
            self.assertEqual(torch.nn.functional.linear(x, w).dtype, torch.float32)

    def test_binary_cross_entropy_is_refused(self):
        p = torch.rand(4).to(DEV)
        with amp.autocast(), self.assertRaisesRegex(RuntimeError, "binary_cross_entropy_with_logits"):
            torch.nn.functional.binary_cross_entropy(p, p)


class AutocastCacheTest(DeviceTestCase):
    def test_a_weight_is_cast_once_per_block(self):
        layer = torch.nn.Linear(8, 4).to(DEV)
        x = _randn(2, 8)

        def weight_cast(y):  # the ToCopyBackward node of the weight's cast in y's graph
            return [f for f, _ in y.grad_fn.next_functions if f is not None and "ToCopy" in type(f).__name__]

        with amp.autocast():
            a, b = layer(x), layer(x)
            self.assertTrue(set(weight_cast(a)) & set(weight_cast(b)))
        with amp.autocast():
            c = layer(x)
        self.assertFalse(set(weight_cast(a)) & set(weight_cast(c)))
        with amp.autocast(cache_enabled=False):
            d, e = layer(x), layer(x)
            self.assertFalse(set(weight_cast(d)) & set(weight_cast(e)))


class _Square(torch.autograd.Function):
    @staticmethod
    @amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.inner_enabled = amp.is_autocast_enabled()
        return x * x

    @staticmethod
    @amp.custom_bwd
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


class CustomFunctionTest(DeviceTestCase):
    def test_custom_fwd_casts_inputs_and_turns_autocast_off(self):
        h = _randn(3, dtype=torch.float16).requires_grad_()
        with amp.autocast():
            y = _Square.apply(h)
        self.assertEqual(y.dtype, torch.float32)
        self.assertFalse(y.grad_fn.inner_enabled)
        y.sum().backward()
        self.assertEqual(h.grad.dtype, torch.float16)


class AutocastTrainingTest(DeviceTestCase):
    def test_a_cnn_trains_with_autocast_and_the_grad_scaler_close_to_float32(self):
        def run(mixed):
            torch.manual_seed(0)
            model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
                                        torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                        torch.nn.Linear(8, 5)).to(DEV)
            opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
            scaler = amp.GradScaler(enabled=mixed)
            losses = []
            for i in range(6):
                g = torch.Generator().manual_seed(i)
                x, y = torch.randn(8, 3, 8, 8, generator=g).to(DEV), torch.randint(0, 5, (8,), generator=g).to(DEV)
                with amp.autocast(enabled=mixed):
                    out = model(x)
                    loss = torch.nn.functional.cross_entropy(out, y)
                if mixed:
                    self.assertEqual(out.dtype, torch.float16)
                    self.assertEqual(loss.dtype, torch.float32)
                opt.zero_grad()
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
                losses.append(loss.item())
            return losses, model

        mixed, model = run(True)
        full, _ = run(False)
        for p in model.parameters():
            self.assertEqual(p.dtype, torch.float32)  # master weights stay float32
        for a, b in zip(mixed, full):
            self.assertAlmostEqual(a, b, delta=2e-2 * abs(b) + 1e-3)
        self.assertLess(mixed[-1], mixed[0])


if __name__ == "__main__":
    unittest.main()
