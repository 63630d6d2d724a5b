"""avg_pool2d and avg_pool3d on the device (AvgPool, AvgPoolGrad) against PyTorch's CPU kernels, forward and backward:
strides, padding with and without count_include_pad, ceil_mode, divisor_override, unbatched inputs, float16; no CPU
fallback."""
import unittest

import torch
import torch.nn.functional as F

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase, forward_backward, relative_error


class AvgPoolTest(DeviceTestCase):
    def check(self, fn, x, tol=1e-6):
        y_cpu, g_cpu = forward_backward(fn, x)
        y_dev, g_dev = forward_backward(fn, x.to(DEV))
        self.assertEqual(y_dev.shape, y_cpu.shape)
        self.assertLess(relative_error(y_cpu, y_dev), tol)
        self.assertLess(relative_error(g_cpu[0], g_dev[0]), tol)

    def test_avg_pool2d(self):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(2, 3, 9, 10, generator=g)
        cases = [
            dict(kernel_size=2),
            dict(kernel_size=3, stride=2, padding=1),
            dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
            dict(kernel_size=(3, 2), stride=(2, 3), ceil_mode=True),
            dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
            dict(kernel_size=2, divisor_override=3),
        ]
        for kw in cases:
            with self.subTest(**kw):
                self.check(lambda t: F.avg_pool2d(t, **kw), x)
        self.check(lambda t: F.avg_pool2d(t, 3, 1, 1), x[0])  # unbatched CHW
        self.check(lambda t: F.avg_pool1d(t, 3, 2), x[:, :, 0])  # 1-D through avg_pool2d
        self.assertEqual(npu.fallback_ops(), {})

    def test_avg_pool3d(self):
        g = torch.Generator().manual_seed(1)
        x = torch.randn(2, 2, 5, 6, 7, generator=g)
        for kw in (dict(kernel_size=2), dict(kernel_size=(1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)),
                   dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)):
            with self.subTest(**kw):
                self.check(lambda t: F.avg_pool3d(t, **kw), x)
        self.assertEqual(npu.fallback_ops(), {})

    def test_float16(self):
        x = torch.randn(1, 4, 8, 8).half()
        cpu = F.avg_pool2d(x.float(), 2).half()
        dev = F.avg_pool2d(x.to(DEV), 2)
        self.assertEqual(dev.dtype, torch.float16)
        self.assertLess(relative_error(cpu, dev), 1e-3)


if __name__ == "__main__":
    unittest.main()
