"""torchvision's roi_pool and ps_roi_align, forward and backward, as device kernels (RoiPoolingWithArgMax,
RoiPoolingGradWithArgMax, PSROIPoolingV2, PSROIPoolingGradV2D; Note [torchvision roi pooling on the device] in
pytorch/src/kernels_torchvision_roi_pool.cpp) against torchvision's CPU kernels: several spatial scales, sampling
ratios and output sizes, rois partly or wholly outside the map, empty and reversed rois, no rois, float16, the
modules, and float64 on the CPU fallback, counted."""
import unittest

import torch

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase

try:
    import torchvision
except ImportError:  # pragma: no cover - Debian's python3-torchvision is installed by bootstrap.sh
    torchvision = None

# Rois of both images: inside, fractional, partly outside, wholly outside, empty (x1 == x2), reversed
# (x2 < x1), one row tall, and a corner at a half pixel that spatial_scale 0.5 rounds away from zero.
ROIS = torch.tensor([[0, 1.0, 1.0, 9.0, 9.0], [1, 3.3, 2.7, 14.2, 12.9], [1, -6.0, 10.0, 30.0, 40.0],
                     [0, 20.0, 20.0, 30.0, 28.0], [0, 5.0, 5.0, 5.0, 5.0], [1, 9.0, 8.0, 2.0, 3.0],
                     [0, 2.0, 7.0, 13.0, 7.0], [1, 3.0, 5.0, 11.0, 9.0]])


def gen(seed):
    return torch.Generator().manual_seed(seed)


def forward_backward(fn, x, seed=1):
    """fn(x)'s output and x's gradient for a seeded random output gradient, x on its own device."""
    x = x.detach().clone().requires_grad_()
    y = fn(x)
    y.backward(torch.randn(y.shape, generator=gen(seed), dtype=y.dtype).to(y.device))
    return y.detach(), x.grad


@unittest.skipIf(torchvision is None, "torchvision is not installed")
class RoiPoolTest(DeviceTestCase):
    """roi_pool: bins of whole pixels, so the device's values and argmax equal the CPU's."""

    def assert_matches_cpu(self, fn, x, tol=1e-6):
        y_cpu, g_cpu = forward_backward(fn, x)
        y_dev, g_dev = forward_backward(fn, x.to(DEV))
        self.assertEqual((y_dev.device, y_dev.dtype), (DEV, y_cpu.dtype))
        torch.testing.assert_close(y_dev.cpu(), y_cpu, rtol=tol, atol=tol, equal_nan=True)
        torch.testing.assert_close(g_dev.cpu(), g_cpu, rtol=tol, atol=tol)

    def test_forward_and_backward_match_the_cpu(self):
        x = torch.randn(2, 4, 16, 16, generator=gen(0))
        for scale in (1.0, 0.5, 0.25, 0.7):
            for size in ((2, 2), (3, 5), (7, 7), 1):
                with self.subTest(scale=scale, size=size):
                    self.assert_matches_cpu(
                        lambda t: torchvision.ops.roi_pool(t, ROIS.to(t.device), size, spatial_scale=scale), x)
        self.assertEqual(npu.fallback_ops(), {})

    def test_argmax_matches_the_cpu(self):
        x = torch.randn(2, 3, 9, 11, generator=gen(2))
        for scale in (1.0, 0.5):
            y, argmax = torch.ops.torchvision.roi_pool(x, ROIS, scale, 3, 4)
            y_dev, argmax_dev = torch.ops.torchvision.roi_pool(x.to(DEV), ROIS.to(DEV), scale, 3, 4)
            self.assertEqual(argmax_dev.dtype, torch.int32)
            self.assertTrue(torch.equal(y_dev.cpu(), y), scale)
            self.assertTrue(torch.equal(argmax_dev.cpu(), argmax), scale)
            self.assertTrue((argmax == -1).any())  # empty bins outside the map
            grad = torch.randn(y.shape, generator=gen(3))
            dx = torch.ops.torchvision._roi_pool_backward(grad, ROIS, argmax, scale, 3, 4, 2, 3, 9, 11)
            dx_dev = torch.ops.torchvision._roi_pool_backward(grad.to(DEV), ROIS.to(DEV), argmax_dev, scale, 3, 4,
                                                              2, 3, 9, 11)
            torch.testing.assert_close(dx_dev.cpu(), dx, rtol=1e-6, atol=1e-6)
        self.assertEqual(npu.fallback_ops(), {})

    def test_module_box_list_float16_and_bfloat16(self):
        x = torch.randn(2, 3, 10, 12, generator=gen(4))
        boxes = [torch.tensor([[1.0, 1.0, 6.0, 8.0]]), torch.tensor([[0.0, 2.0, 11.0, 9.0], [4.0, 4.0, 5.0, 5.0]])]
        pool = torchvision.ops.RoIPool((3, 2), spatial_scale=0.5)
        self.assert_matches_cpu(lambda t: pool(t, [b.to(t.device) for b in boxes]), x)
        # float16: the maxima are exact; the gradient's sums round once on the device, per add on the CPU.
        self.assert_matches_cpu(lambda t: pool(t, [b.half().to(t.device) for b in boxes]), x.half(), tol=1e-2)
        # bfloat16 (no CPU kernel in torchvision): the float32 maxima of the same values.
        xb = x.bfloat16()
        yb = pool(xb.to(DEV), [b.bfloat16().to(DEV) for b in boxes])
        self.assertEqual(yb.dtype, torch.bfloat16)
        self.assertTrue(torch.equal(yb.cpu().float(), pool(xb.float(), boxes)))
        self.assertEqual(npu.fallback_ops(), {})

    def test_no_rois(self):
        x = torch.randn(1, 2, 5, 5, generator=gen(5))
        y_dev, g_dev = forward_backward(lambda t: torchvision.ops.roi_pool(t, torch.zeros(0, 5).to(DEV), 2), x.to(DEV))
        self.assertEqual(y_dev.shape, (0, 2, 2, 2))
        self.assertTrue(torch.equal(g_dev.cpu(), torch.zeros(1, 2, 5, 5)))
        self.assertEqual(npu.fallback_ops(), {})

    def test_bad_batch_index_is_a_kernel_fault(self):
        x = torch.randn(1, 2, 5, 5, generator=gen(6)).to(DEV)
        with self.assertRaisesRegex(RuntimeError, "RoiPoolingWithArgMax.*batch_indices\\[0\\] = 3"):
            torchvision.ops.roi_pool(x, torch.tensor([[3, 0, 0, 2, 2.0]]).to(DEV), 2).cpu()
        self.assertEqual(npu.fallback_ops(), {})

    def test_float64_falls_back(self):
        x = torch.randn(2, 3, 8, 8, dtype=torch.float64, generator=gen(7))
        rois = ROIS.double() * 0.5
        self.assert_matches_cpu(lambda t: torchvision.ops.roi_pool(t, rois.to(t.device), 2), x)
        self.assertEqual(npu.fallback_ops(), {"torchvision::roi_pool": 1, "torchvision::_roi_pool_backward": 1})


@unittest.skipIf(torchvision is None, "torchvision is not installed")
class PsRoiAlignTest(DeviceTestCase):
    """ps_roi_align: RoiAlign's sampling per output channel; positions in float64 on the device, float32 on the CPU."""

    def assert_matches_cpu(self, fn, x, tol=1e-5):
        y_cpu, g_cpu = forward_backward(fn, x)
        y_dev, g_dev = forward_backward(fn, x.to(DEV))
        self.assertEqual((y_dev.device, y_dev.dtype), (DEV, y_cpu.dtype))
        # tol: up to ~60 samples a bin summed in float32, whose positions torchvision computes in float32.
        torch.testing.assert_close(y_dev.cpu(), y_cpu, rtol=tol, atol=tol, equal_nan=True)
        torch.testing.assert_close(g_dev.cpu(), g_cpu, rtol=tol, atol=tol)
        return y_cpu

    def test_forward_and_backward_match_the_cpu(self):
        x = torch.randn(2, 36, 16, 16, generator=gen(10))
        for scale in (1.0, 0.5, 0.25):
            for ratio in (0, 1, 2, -1):
                for size in ((2, 2), (3, 3), (2, 3), (1, 4)):
                    with self.subTest(scale=scale, ratio=ratio, size=size):
                        self.assert_matches_cpu(
                            lambda t: torchvision.ops.ps_roi_align(t, ROIS.to(t.device), size, spatial_scale=scale,
                                                                   sampling_ratio=ratio), x)
        self.assertEqual(npu.fallback_ops(), {})

    def test_empty_rois_give_nan_as_on_the_cpu(self):
        # An adaptive grid of no samples divides by zero in torchvision (its roi_align has a floor of 1).
        x = torch.randn(2, 8, 10, 10, generator=gen(11))
        y = self.assert_matches_cpu(lambda t: torchvision.ops.ps_roi_align(t, ROIS.to(t.device), 2), x)
        self.assertTrue(y[4].isnan().all())
        self.assertEqual(npu.fallback_ops(), {})

    def test_channel_mapping_matches_the_cpu(self):
        x = torch.randn(2, 12, 9, 11, generator=gen(12))
        y, mapping = torch.ops.torchvision.ps_roi_align(x, ROIS, 0.5, 2, 3, 2)
        y_dev, mapping_dev = torch.ops.torchvision.ps_roi_align(x.to(DEV), ROIS.to(DEV), 0.5, 2, 3, 2)
        self.assertEqual(mapping_dev.dtype, torch.int32)
        self.assertTrue(torch.equal(mapping_dev.cpu(), mapping))
        torch.testing.assert_close(y_dev.cpu(), y, rtol=1e-5, atol=1e-5)
        grad = torch.randn(y.shape, generator=gen(13))
        dx = torch.ops.torchvision._ps_roi_align_backward(grad, ROIS, mapping, 0.5, 2, 3, 2, 2, 12, 9, 11)
        dx_dev = torch.ops.torchvision._ps_roi_align_backward(grad.to(DEV), ROIS.to(DEV), mapping_dev, 0.5, 2, 3, 2,
                                                              2, 12, 9, 11)
        torch.testing.assert_close(dx_dev.cpu(), dx, rtol=1e-5, atol=1e-5)
        self.assertEqual(npu.fallback_ops(), {})

    def test_module_box_list_float16_and_bfloat16(self):
        x = torch.randn(2, 8, 10, 12, generator=gen(14))
        boxes = [torch.tensor([[1.0, 1.0, 6.0, 8.0]]), torch.tensor([[0.0, 2.0, 11.0, 9.0], [4.0, 4.0, 7.0, 5.0]])]
        align = torchvision.ops.PSRoIAlign(2, spatial_scale=0.5, sampling_ratio=2)
        y = self.assert_matches_cpu(lambda t: align(t, [b.to(t.device) for b in boxes]), x)
        half = align(x.half().to(DEV), [b.half().to(DEV) for b in boxes])
        self.assertEqual(half.dtype, torch.float16)
        torch.testing.assert_close(half.cpu().float(), y, rtol=1e-2, atol=1e-2)
        self.assert_matches_cpu(lambda t: align(t, [b.half().to(t.device) for b in boxes]), x.half(), tol=1e-2)
        # bfloat16 (no CPU kernel in torchvision): within bfloat16's rounding of the float32 result.
        xb = x.bfloat16()
        yb = align(xb.to(DEV), [b.bfloat16().to(DEV) for b in boxes])
        self.assertEqual(yb.dtype, torch.bfloat16)
        torch.testing.assert_close(yb.cpu().float(), align(xb.float(), boxes), rtol=1e-2, atol=1e-2)
        self.assertEqual(npu.fallback_ops(), {})

    def test_no_rois(self):
        x = torch.randn(1, 4, 5, 5, generator=gen(15))
        y_dev, g_dev = forward_backward(lambda t: torchvision.ops.ps_roi_align(t, torch.zeros(0, 5).to(DEV), 2),
                                        x.to(DEV))
        self.assertEqual(y_dev.shape, (0, 1, 2, 2))
        self.assertTrue(torch.equal(g_dev.cpu(), torch.zeros(1, 4, 5, 5)))
        self.assertEqual(npu.fallback_ops(), {})

    def test_float64_and_odd_channels_fall_back(self):
        x = torch.randn(2, 8, 8, 8, dtype=torch.float64, generator=gen(16))
        rois = ROIS.double() * 0.5
        self.assert_matches_cpu(lambda t: torchvision.ops.ps_roi_align(t, rois.to(t.device), 2, sampling_ratio=2), x)
        self.assertEqual(npu.fallback_ops(),
                         {"torchvision::ps_roi_align": 1, "torchvision::_ps_roi_align_backward": 1})
        # Channels not a multiple of the bins: torchvision's own error, from the fallback.
        with self.assertRaisesRegex(RuntimeError, "multiple of pooling height"):
            torchvision.ops.ps_roi_align(torch.randn(1, 6, 5, 5).to(DEV), ROIS[:1].to(DEV), 2)


if __name__ == "__main__":
    unittest.main()
