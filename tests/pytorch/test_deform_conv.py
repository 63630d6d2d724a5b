"""torchvision's deform_conv2d and its backward _deform_conv2d_backward as device kernels (DeformableOffsets, Conv2d,
and DeformableOffsetsGrad with the convolution's gradients: Note [deform_conv2d on the device] in
pytorch/src/kernels_torchvision_deform_conv.cpp) against torchvision's CPU kernels: the output and all five gradients
(input, offset, weight, bias, mask) through torchvision.ops.deform_conv2d and DeformConv2d, with and without a mask,
groups, offset groups, stride, padding, dilation and offsets pointing off the map; float16 and bfloat16 against the CPU
in float32; a few SGD steps of a small model; float64, bad shapes and empty batches on the CPU fallback."""
import unittest

import torch

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase, forward_backward, relative_error

try:
    import torchvision
    from torchvision.ops import deform_conv2d
except ImportError:  # pragma: no cover - Debian's python3-torchvision is installed by bootstrap.sh
    torchvision = None


def half_forward_backward(fn, grad, *inputs):
    """fn's output and its inputs' gradients for the output gradient `grad` (in the output's dtype)."""
    xs = [x.detach().clone().requires_grad_() for x in inputs]
    y = fn(*xs)
    y.backward(grad.to(y))
    return y, [x.grad for x in xs]


def out_size(size, k, stride, pad, dil):
    return (size + 2 * pad - dil * (k - 1) - 1) // stride + 1


def make_inputs(seed, n, cin, cout, hw, k, stride=(1, 1), pad=(0, 0), dil=(1, 1), groups=1, offset_groups=1,
                offset_scale=2.0, dtype=torch.float32):
    """x, offset, weight, bias, mask for one deform_conv2d call (offsets of about +-offset_scale pixels)."""
    g = torch.Generator().manual_seed(seed)
    oh, ow = (out_size(hw[d], k[d], stride[d], pad[d], dil[d]) for d in range(2))
    taps = offset_groups * k[0] * k[1]
    x = torch.randn(n, cin, *hw, generator=g, dtype=dtype)
    offset = (torch.rand(n, 2 * taps, oh, ow, generator=g, dtype=dtype) * 2 - 1) * offset_scale
    weight = torch.randn(cout, cin // groups, *k, generator=g, dtype=dtype)
    bias = torch.randn(cout, generator=g, dtype=dtype)
    mask = torch.rand(n, taps, oh, ow, generator=g, dtype=dtype)
    return x, offset, weight, bias, mask


# (name, inputs, stride, padding, dilation, with mask)
CASES = [
    ("plain 3x3", dict(n=2, cin=3, cout=4, hw=(7, 6), k=(3, 3)), 1, 0, 1, False),
    ("modulated, padded", dict(n=2, cin=3, cout=4, hw=(6, 7), k=(3, 3), pad=(1, 1)), 1, 1, 1, True),
    ("stride, dilation", dict(n=1, cin=2, cout=3, hw=(9, 8), k=(3, 2), stride=(2, 1), pad=(1, 2), dil=(2, 1)),
     (2, 1), (1, 2), (2, 1), True),
    ("groups, offset groups", dict(n=2, cin=4, cout=6, hw=(6, 6), k=(3, 3), pad=(1, 1), groups=2, offset_groups=2),
     1, 1, 1, True),
    ("offset groups, no mask", dict(n=1, cin=6, cout=2, hw=(5, 7), k=(2, 3), offset_groups=3), 1, 0, 1, False),
    ("offsets off the map", dict(n=2, cin=2, cout=3, hw=(5, 5), k=(3, 3), pad=(1, 1), offset_scale=8.0), 1, 1, 1,
     True),
]


@unittest.skipIf(torchvision is None, "torchvision is not installed")
class DeformConv2dTest(DeviceTestCase):

    def check_call(self, name, inputs, stride, padding, dilation, with_mask, tol=2e-5):
        x, offset, weight, bias, mask = inputs
        if with_mask:
            fn = lambda x, o, w, b, m: deform_conv2d(x, o, w, b, stride, padding, dilation, m)  # noqa: E731
            args = (x, offset, weight, bias, mask)
        else:
            fn = lambda x, o, w, b: deform_conv2d(x, o, w, b, stride, padding, dilation)  # noqa: E731
            args = (x, offset, weight, bias)
        y_cpu, g_cpu = forward_backward(fn, *args)
        y_dev, g_dev = forward_backward(fn, *[a.to(DEV) for a in args])
        self.assertEqual(y_dev.device, DEV, name)
        self.assertEqual(y_dev.shape, y_cpu.shape, name)
        self.assertLess(relative_error(y_cpu, y_dev), tol, name)
        for what, a, b in zip(("input", "offset", "weight", "bias", "mask"), g_cpu, g_dev):
            self.assertEqual(b.device, DEV, (name, what))
            self.assertLess(relative_error(a, b), tol, (name, what))

    def test_forward_and_all_gradients_match_the_cpu(self):
        for seed, (name, shape, stride, padding, dilation, with_mask) in enumerate(CASES):
            npu.reset_fallback_ops()
            self.check_call(name, make_inputs(seed, **shape), stride, padding, dilation, with_mask)
            self.assertEqual(npu.fallback_ops(), {}, name)

    def test_offsets_on_pixels_and_map_edges(self):
        # Integer offsets put samples exactly on pixels, on -1 and on H / W, where the bilinear weights and the
        # offsets' gradient switch neighbours.
        x, offset, weight, bias, mask = make_inputs(10, n=1, cin=2, cout=2, hw=(4, 5), k=(2, 2), pad=(1, 1))
        offset = torch.randint(-3, 4, offset.shape, generator=torch.Generator().manual_seed(11)).float()
        self.check_call("integer offsets", (x, offset, weight, bias, mask), 1, 1, 1, True)
        self.check_call("integer offsets, no mask", (x, offset, weight, bias, mask), 1, 1, 1, False)
        self.assertEqual(npu.fallback_ops(), {})

    def test_deform_conv2d_module_matches_the_cpu(self):
        torch.manual_seed(3)
        for bias in (True, False):
            m_cpu = torchvision.ops.DeformConv2d(4, 6, 3, stride=1, padding=1, dilation=1, groups=2, bias=bias)
            m_dev = torchvision.ops.DeformConv2d(4, 6, 3, stride=1, padding=1, dilation=1, groups=2, bias=bias)
            m_dev.load_state_dict(m_cpu.state_dict())
            m_dev = m_dev.to(DEV)
            x, offset, _, _, mask = make_inputs(20 + bias, n=2, cin=4, cout=6, hw=(5, 6), k=(3, 3), pad=(1, 1),
                                                offset_groups=2)
            for with_mask in (True, False):
                xs = [t.clone().requires_grad_() for t in (x, offset, mask)]
                xd = [t.to(DEV).requires_grad_() for t in (x, offset, mask)]
                y_cpu = m_cpu(xs[0], xs[1], xs[2] if with_mask else None)
                y_dev = m_dev(xd[0], xd[1], xd[2] if with_mask else None)
                self.assertLess(relative_error(y_cpu, y_dev), 2e-5)
                grad = torch.randn(y_cpu.shape, generator=torch.Generator().manual_seed(5))
                y_cpu.backward(grad)
                y_dev.backward(grad.to(DEV))
                for a, b in zip(xs[:3 if with_mask else 2], xd):
                    self.assertLess(relative_error(a.grad, b.grad), 2e-5)
                if not with_mask:
                    self.assertIsNone(xd[2].grad)
                for (pname, p_cpu), p_dev in zip(m_cpu.named_parameters(), m_dev.parameters()):
                    self.assertLess(relative_error(p_cpu.grad, p_dev.grad), 2e-5, pname)
                m_cpu.zero_grad()
                m_dev.zero_grad()
        self.assertEqual(npu.fallback_ops(), {})

    def test_sgd_steps_of_a_small_model_match_the_cpu(self):
        def model():
            torch.manual_seed(7)
            offsets = torch.nn.Conv2d(3, 3 * 9, 3, padding=1)  # 2 * 9 offsets and 9 mask logits
            deform = torchvision.ops.DeformConv2d(3, 4, 3, padding=1)
            head = torch.nn.Linear(4, 2)
            torch.nn.init.normal_(offsets.weight, std=0.3)
            return torch.nn.ModuleList([offsets, deform, head])

        def forward(m, x):
            om = m[0](x)
            y = torch.relu(m[1](x, om[:, :18], torch.sigmoid(om[:, 18:])))
            return m[2](y.mean((2, 3)))

        g = torch.Generator().manual_seed(8)
        x, target = torch.randn(4, 3, 8, 8, generator=g), torch.randn(4, 2, generator=g)
        m_cpu, m_dev = model(), model().to(DEV)
        opt_cpu = torch.optim.SGD(m_cpu.parameters(), lr=0.1, momentum=0.9)
        opt_dev = torch.optim.SGD(m_dev.parameters(), lr=0.1, momentum=0.9)
        for _ in range(3):
            for m, opt, xx, t in ((m_cpu, opt_cpu, x, target), (m_dev, opt_dev, x.to(DEV), target.to(DEV))):
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(forward(m, xx), t)
                loss.backward()
                opt.step()
        for (name, a), b in zip(m_cpu.named_parameters(), m_dev.parameters()):
            self.assertLess(relative_error(a, b), 1e-4, name)
        self.assertEqual(npu.fallback_ops(), {})

    def test_float16_and_bfloat16_match_the_cpu_in_float32(self):
        inputs = make_inputs(30, n=2, cin=4, cout=4, hw=(6, 6), k=(3, 3), pad=(1, 1), groups=2, offset_groups=2)
        fn = lambda x, o, w, b, m: deform_conv2d(x, o, w, b, 1, 1, 1, m)  # noqa: E731
        for dtype, tol in ((torch.float16, 2e-3), (torch.bfloat16, 1.5e-2)):
            low = [t.to(dtype) for t in inputs]
            # One output gradient for both dtypes (forward_backward's randn draws other values in float16).
            grad = torch.randn(2, 4, 6, 6, generator=torch.Generator().manual_seed(31)).to(dtype)
            y_cpu, g_cpu = half_forward_backward(fn, grad, *(t.float() for t in low))
            y_dev, g_dev = half_forward_backward(fn, grad, *(t.to(DEV) for t in low))
            self.assertEqual(y_dev.dtype, dtype)
            self.assertLess(relative_error(y_cpu, y_dev), tol, dtype)
            for what, a, b in zip(("input", "offset", "weight", "bias", "mask"), g_cpu, g_dev):
                self.assertEqual(b.dtype, dtype, what)
                self.assertLess(relative_error(a, b), 2 * tol, (dtype, what, relative_error(a, b)))
        self.assertEqual(npu.fallback_ops(), {})

    def test_float64_falls_back(self):
        args = make_inputs(40, n=1, cin=2, cout=2, hw=(5, 5), k=(3, 3), dtype=torch.float64)
        fn = lambda x, o, w, b, m: deform_conv2d(x, o, w, b, 1, 0, 1, m)  # noqa: E731
        y_cpu, g_cpu = forward_backward(fn, *args)
        y_dev, g_dev = forward_backward(fn, *[a.to(DEV) for a in args])
        self.assertEqual((y_dev.device, y_dev.dtype), (DEV, torch.float64))
        self.assertLess(relative_error(y_cpu, y_dev), 1e-12)
        for a, b in zip(g_cpu, g_dev):
            self.assertLess(relative_error(a, b), 1e-12)
        self.assertEqual(npu.fallback_ops(),
                         {"torchvision::deform_conv2d": 1, "torchvision::_deform_conv2d_backward": 1})

    def test_bad_shapes_raise_torchvisions_error_and_empty_batches_fall_back(self):
        x, offset, weight, bias, mask = make_inputs(50, n=1, cin=2, cout=2, hw=(5, 5), k=(3, 3))
        bad_offset = offset[:, :, :2]  # out_h 2 instead of 3
        with self.assertRaises(RuntimeError):
            deform_conv2d(x, bad_offset, weight, bias)
        with self.assertRaises(RuntimeError):
            deform_conv2d(x.to(DEV), bad_offset.to(DEV), weight.to(DEV), bias.to(DEV))
        with self.assertRaises(RuntimeError):  # a mask of the wrong size
            deform_conv2d(x.to(DEV), offset.to(DEV), weight.to(DEV), bias.to(DEV), mask=mask[:, :4].to(DEV))
        npu.reset_fallback_ops()
        empty = deform_conv2d(x[:0].to(DEV), offset[:0].to(DEV), weight.to(DEV), bias.to(DEV))
        self.assertEqual((empty.device, tuple(empty.shape)), (DEV, (0, 2, 3, 3)))
        self.assertEqual(npu.fallback_ops(), {"torchvision::deform_conv2d": 1})


if __name__ == "__main__":
    unittest.main()
