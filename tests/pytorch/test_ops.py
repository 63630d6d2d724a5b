"""Native kernels against CPU PyTorch, forward and backward, and the CPU fallback."""
import unittest

import torch
import torch.nn.functional as F

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase, forward_backward, relative_error

# (name, function, input shapes or tensors): each runs on CPU and on the device.
CASES = [
    ("add_alpha", lambda a, b: torch.add(a, b, alpha=0.5), [(4, 5), (5,)]),
    ("sub_scalar", lambda a: 2.0 - a * 3, [(4, 5)]),
    ("div", lambda a, b: a / (b.abs() + 1), [(3, 4), (3, 4)]),
    ("mm_t", lambda a, b: a @ b.t(), [(8, 16), (12, 16)]),
    ("addmm", lambda a, w, b: F.linear(a, w, b), [(8, 16), (12, 16), (12,)]),
    ("bmm_t", lambda a, b: a @ b.transpose(1, 2), [(2, 5, 8), (2, 6, 8)]),
    ("matmul4d", lambda a, b: a @ b, [(2, 3, 5, 8), (2, 3, 8, 4)]),
    ("conv", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), [(2, 4, 9, 9), (6, 4, 3, 3), (6,)]),
    ("conv_groups", lambda x, w: F.conv2d(x, w, padding=1, groups=2), [(2, 4, 8, 8), (6, 2, 3, 3)]),
    ("conv1d", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=2, dilation=2), [(2, 4, 17), (6, 4, 3), (6,)]),
    ("conv_transpose", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
     [(2, 4, 5, 5), (4, 3, 3, 3), (3,)]),
    ("conv_transpose_groups", lambda x, w: F.conv_transpose2d(x, w, stride=2, groups=2, dilation=2), [(2, 4, 5, 6),
                                                                                                     (4, 3, 2, 3)]),
    ("conv_transpose1d", lambda x, w: F.conv_transpose1d(x, w, stride=3, padding=2), [(2, 4, 7), (4, 5, 4)]),
    ("batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [(4, 3, 5, 5), (3,), (3,)]),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (8,), w, b), [(2, 3, 8), (8,), (8,)]),
    ("max_pool", lambda x: F.max_pool2d(x, 3, 2, 1), [(2, 3, 9, 9)]),
    ("avg_pool1", lambda x: F.adaptive_avg_pool2d(x, 1), [(2, 3, 7, 7)]),
    ("softmax", lambda x: F.softmax(x, -1), [(3, 7)]),
    ("log_softmax", lambda x: F.log_softmax(x, 1), [(3, 7, 2)]),
    ("cross_entropy", lambda x: F.cross_entropy(x, torch.tensor([1, 0, 4]).to(x.device)), [(3, 7)]),
    ("gelu", lambda x: F.gelu(x), [(5, 6)]),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), [(5, 6)]),
    ("silu", lambda x: F.silu(x), [(5, 6)]),
    ("relu", lambda x: F.relu(x), [(5, 6)]),
    ("sigmoid_tanh", lambda x: torch.sigmoid(x) * torch.tanh(x), [(5, 6)]),
    ("sum_mean", lambda x: x.sum(1) * 2 + x.mean((0, 2), keepdim=True).sum(), [(3, 4, 5)]),
    ("masked_softmax", lambda x: F.softmax(x.masked_fill(torch.ones(4, 4, dtype=torch.bool).triu(1).to(x.device),
                                                         float("-inf")), -1), [(2, 4, 4)]),
    ("embedding", lambda w: F.embedding(torch.tensor([[1, 3], [3, 0]]).to(w.device), w), [(5, 4)]),
    ("cat_transpose", lambda a, b: torch.cat([a.t(), b], 0).contiguous(), [(3, 4), (2, 3)]),
    ("sqrt_addcdiv", lambda a, b, c: torch.addcdiv(a, b, c.abs().sqrt() + 1, value=-0.5), [(6,), (6,), (6,)]),
    ("addcmul_lerp", lambda a, b, c: torch.lerp(torch.addcmul(a, b, c, value=0.3), b, 0.25), [(6,), (6,), (6,)]),
]


class NativeOpsTest(DeviceTestCase):
    def test_forward_and_backward_match_cpu(self):
        for name, fn, shapes in CASES:
            with self.subTest(op=name):
                torch.manual_seed(0)
                inputs = [torch.randn(*s) for s in shapes]
                y_cpu, g_cpu = forward_backward(fn, *inputs)
                y_dev, g_dev = forward_backward(fn, *[x.to(DEV) for x in inputs])
                self.assertEqual(y_dev.device, DEV)
                self.assertLess(relative_error(y_cpu, y_dev), 1e-5)
                for a, b in zip(g_cpu, g_dev):
                    self.assertLess(relative_error(a, b), 1e-5)
        self.assertEqual(npu.fallback_ops(), {}, "these ops all have native kernels")

    def test_in_place_ops_write_their_input(self):
        x = torch.randn(4, 6)
        d = x.to(DEV)
        d.add_(1.5).mul_(2).relu_()
        d[:, ::2].zero_()
        x.add_(1.5).mul_(2).relu_()
        x[:, ::2].zero_()
        self.assertTrue(torch.equal(d.cpu(), x))

    def test_dropout_is_native_scaled_and_seeded(self):
        x = torch.ones(1000, device=DEV)
        torch.manual_seed(3)
        a = F.dropout(x, 0.25, training=True).cpu()
        torch.manual_seed(3)
        b = F.dropout(x, 0.25, training=True).cpu()
        self.assertTrue(torch.equal(a, b))  # torch.manual_seed repeats the mask
        kept = (a != 0).float().mean().item()
        self.assertTrue(0.68 < kept < 0.82, kept)
        self.assertTrue(torch.allclose(a[a != 0], torch.tensor(1 / 0.75)))
        self.assertEqual(npu.fallback_ops(), {})

    def test_fallback_runs_ops_without_native_kernels_and_counts_them(self):
        x = torch.randn(5, 7)
        d = x.to(DEV)
        self.assertTrue(torch.allclose(torch.lgamma(d).cpu(), torch.lgamma(x)))
        v, i = torch.kthvalue(d, 2, 1)
        self.assertTrue(torch.equal(v.cpu(), torch.kthvalue(x, 2, 1)[0]))
        self.assertEqual(i.device, DEV)
        d.frac_()  # an in-place op through the fallback
        self.assertTrue(torch.equal(d.cpu(), x.frac()))
        ops = npu.fallback_ops()
        self.assertEqual(ops.get("aten::lgamma"), 1)
        self.assertIn("aten::kthvalue", ops)
        self.assertIn("aten::frac", ops)

    def test_fallback_computes_float16_in_float32_where_the_cpu_has_no_kernel(self):
        x = torch.randn(6, 5).half()
        v, i = torch.kthvalue(x.to(DEV), 2)  # 1.13's CPU kthvalue has no float16 kernel
        self.assertEqual(v.dtype, torch.float16)
        ev, ei = torch.kthvalue(x.float(), 2)
        self.assertTrue(torch.equal(v.cpu(), ev.half()))
        self.assertTrue(torch.equal(i.cpu(), ei))
        self.assertEqual(npu.fallback_ops(), {"aten::kthvalue": 1})

    def test_comparisons_selection_and_reductions_are_native(self):
        torch.manual_seed(0)
        x, y = torch.randn(4, 6), torch.randn(4, 6)
        x[0, 0] = y[0, 0]
        d, e = x.to(DEV), y.to(DEV)
        checks = [
            (d == e, x == y), (d != e, x != y), (d < 0.1, x < 0.1), (d <= e, x <= y), (d > e, x > y),
            (d >= 0, x >= 0), (torch.where(d > 0, d, e), torch.where(x > 0, x, y)), (~(d > 0), ~(x > 0)),
            ((d > 0) & (e > 0), (x > 0) & (y > 0)), ((d > 0) | (e > 0), (x > 0) | (y > 0)),
            (torch.maximum(d, e), torch.maximum(x, y)), (torch.minimum(d, e), torch.minimum(x, y)),
            (d.clamp(-0.5, 0.5), x.clamp(-0.5, 0.5)), (d.max(), x.max()), (d.min(), x.min()),
            (d.argmax(1), x.argmax(1)), (d.argmin(), x.argmin()), (d.max(1).values, x.max(1).values),
            (d.max(0, keepdim=True).indices, x.max(0, keepdim=True).indices), (torch.cumsum(d, 1), torch.cumsum(x, 1)),
            (d ** 2, x ** 2), (d.abs() ** 0.5, x.abs() ** 0.5), (d.abs() ** 1.5, x.abs() ** 1.5),
            ((d.argmax(1) == e.argmax(1)).float().mean(), (x.argmax(1) == y.argmax(1)).float().mean()),
        ]
        for i, (got, want) in enumerate(checks):
            with self.subTest(case=i):
                self.assertEqual(got.device, DEV)
                self.assertEqual(got.dtype, want.dtype)
                self.assertEqual(got.shape, want.shape)
                if want.is_floating_point():
                    self.assertTrue(torch.allclose(got.cpu(), want, rtol=1e-6, atol=1e-6))
                else:
                    self.assertTrue(torch.equal(got.cpu(), want))
        self.assertEqual(npu.fallback_ops(), {})

    def test_bitwise_truth_and_log_of_a_base_are_native(self):
        """Detection's uint8 sampler masks (`pos | neg`), integer flags, any / all, and log2 (its level
        mapper floors log2 of box scales, so a power of two must stay exact)."""
        torch.manual_seed(1)
        u, v = torch.randint(0, 2, (5, 7), dtype=torch.uint8), torch.randint(0, 2, (5, 7), dtype=torch.uint8)
        i, j = torch.randint(-50, 50, (6,), dtype=torch.int32), torch.randint(-50, 50, (6,), dtype=torch.int64)
        x = torch.randn(3, 4)
        x[1] = 0
        x[2, 1] = float("nan")
        scales = torch.tensor([56.0, 112.0, 224.0, 448.0, 300.0, 1e-3])
        ud, vd, id_, jd, xd = (t.to(DEV) for t in (u, v, i, j, x))
        checks = [
            (ud | vd, u | v), (ud & vd, u & v), (ud ^ vd, u ^ v), (id_ & 12, i & 12), (id_ | jd, i | j),
            (id_ ^ (id_ * 3), i ^ (i * 3)), ((xd > 0) ^ (xd < 0), (x > 0) ^ (x < 0)),
            (xd.any(), x.any()), (xd.all(), x.all()), (xd.any(1), x.any(1)), (xd.all(0, keepdim=True), x.all(0, True)),
            ((xd > 0).any(), (x > 0).any()), (id_.all(), i.all()), (xd[0, 0].any(), x[0, 0].any()),
            (torch.log2(scales.to(DEV)), torch.log2(scales)), (torch.log10(scales.to(DEV)), torch.log10(scales)),
            (torch.floor(4 + torch.log2(scales.to(DEV) / 224) + 1e-6), torch.floor(4 + torch.log2(scales / 224) + 1e-6)),
            (torch.log2(jd.abs() + 1), torch.log2(j.abs() + 1)),
        ]
        for k, (got, want) in enumerate(checks):
            with self.subTest(case=k):
                self.assertEqual((got.device, got.dtype, got.shape), (DEV, want.dtype, want.shape))
                if want.is_floating_point():
                    self.assertTrue(torch.allclose(got.cpu(), want, rtol=1e-6, atol=0))
                else:
                    self.assertTrue(torch.equal(got.cpu(), want))
        self.assertEqual(npu.fallback_ops(), {})

    def test_float64_arithmetic_is_native(self):
        # No f64 on the NPU: add, sub and mul run their CPU kernels as AI CPU tasks, exactly, and a float32 0-d
        # tensor times a float64 0-d CPU tensor (label smoothing's backward) promotes as on the CPU.
        g = torch.Generator().manual_seed(0)
        a, b = torch.randn(9, dtype=torch.float64, generator=g), torch.randn(9, dtype=torch.float64, generator=g)
        for fn in (torch.mul, torch.add, torch.sub, lambda a, b: a * 1.7 - b):
            self.assertTrue(torch.equal(fn(a.to(DEV), b.to(DEV)).cpu(), fn(a, b)))
        # The CPU's alpha is a fused multiply-add: an ulp apart.
        axpy = a.to(DEV).add(b.to(DEV), alpha=0.3).cpu()
        self.assertTrue(torch.allclose(axpy, a.add(b, alpha=0.3), rtol=4e-16, atol=0))
        half = torch.tensor(0.5).to(DEV) * torch.tensor(0.1, dtype=torch.float64)
        self.assertEqual((half.device, half.dtype, half.item()), (DEV, torch.float64, 0.05))
        self.assertEqual(npu.fallback_ops(), {})

    def test_linspace_matches_the_cpu(self):
        # PyTorch's vector path steps from each chunk's first value: within an ulp or two of one rounding of
        # start + i * step (LinSpace); the ends are exact.
        for args in ((-1, 1, 7), (0, 1, 10), (-0.75, 0.75, 4), (2, 2, 1), (3, 5, 0), (-1, 1, 1001)):
            with self.subTest(args=args):
                got, want = torch.linspace(*args, device=DEV).cpu(), torch.linspace(*args)
                self.assertTrue(torch.allclose(got, want, rtol=0, atol=2.5e-7))
                self.assertTrue(torch.equal(got[[0, -1]], want[[0, -1]]) if len(want) else True)
        self.assertTrue(torch.equal(torch.linspace(0, 10, 4, dtype=torch.int64, device=DEV).cpu(),
                                    torch.linspace(0, 10, 4, dtype=torch.int64)))
        self.assertEqual(npu.fallback_ops(), {})

    def test_randperm_is_a_seeded_permutation(self):
        for n, dtype in ((0, torch.int64), (1, torch.int64), (257, torch.int64), (40, torch.int32)):
            with self.subTest(n=n, dtype=dtype):
                torch.manual_seed(5)
                p = torch.randperm(n, dtype=dtype, device=DEV)
                self.assertEqual((p.device, p.dtype), (DEV, dtype))
                self.assertTrue(torch.equal(p.cpu().sort().values, torch.arange(n, dtype=dtype)))
                torch.manual_seed(5)
                self.assertTrue(torch.equal(torch.randperm(n, dtype=dtype, device=DEV).cpu(), p.cpu()))
        self.assertFalse(torch.equal(torch.randperm(257, device=DEV).cpu(), torch.randperm(257, device=DEV).cpu()))
        self.assertEqual(npu.fallback_ops(), {})

    def test_float16_native_ops(self):
        a, b = torch.randn(16, 32), torch.randn(32, 8)
        y = (a.half().to(DEV) @ b.half().to(DEV)).cpu()
        self.assertEqual(y.dtype, torch.float16)
        self.assertLess(relative_error(a @ b, y.float()), 5e-3)


if __name__ == "__main__":
    unittest.main()
