"""F.interpolate / nn.Upsample on the device (Resize, and ResizeGrad for the backward) against PyTorch's CPU kernels:
nearest and bilinear, by size and by scale factor, align_corners, down- and upsampling, float16; no CPU fallback.
F.grid_sample: test_grid_sample.py."""
import unittest

import torch
import torch.nn.functional as F

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase, forward_backward, relative_error


class UpsampleTest(DeviceTestCase):
    def check(self, fn, x, tol=1e-5):
        y_cpu, g_cpu = forward_backward(fn, x)
        y_dev, g_dev = forward_backward(fn, x.to(DEV))
        self.assertEqual(y_dev.shape, y_cpu.shape)
        self.assertLess(relative_error(y_cpu, y_dev), tol)
        self.assertLess(relative_error(g_cpu[0], g_dev[0]), tol)

    def test_nearest(self):
        x = torch.randn(2, 3, 5, 6, generator=torch.Generator().manual_seed(0))
        for kw in (dict(scale_factor=2), dict(size=(7, 9)), dict(size=(3, 4)), dict(scale_factor=(1.5, 3))):
            with self.subTest(**kw):
                self.check(lambda t: F.interpolate(t, mode="nearest", **kw), x)
        self.assertEqual(npu.fallback_ops(), {})

    def test_bilinear(self):
        x = torch.randn(2, 3, 5, 6, generator=torch.Generator().manual_seed(1))
        for kw in (dict(scale_factor=2), dict(size=(9, 7)), dict(size=(3, 4)), dict(scale_factor=2, align_corners=True),
                   dict(size=(8, 11), align_corners=True), dict(scale_factor=0.5)):
            with self.subTest(**kw):
                self.check(lambda t: F.interpolate(t, mode="bilinear", **kw), x)
        self.check(lambda t: torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)(t), x)
        self.assertEqual(npu.fallback_ops(), {})

    def test_float16(self):
        x = torch.randn(1, 2, 4, 4).half()
        cpu = F.interpolate(x.float(), scale_factor=2, mode="bilinear").half()
        dev = F.interpolate(x.to(DEV), scale_factor=2, mode="bilinear")
        self.assertEqual(dev.dtype, torch.float16)
        self.assertLess(relative_error(cpu, dev), 2e-3)


if __name__ == "__main__":
    unittest.main()
