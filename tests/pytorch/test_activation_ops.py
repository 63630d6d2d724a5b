"""leaky_relu (LeakyRelu, LeakyReluGrad; also in place), round / floor / ceil (Round, Floor, Ceil) and smooth_l1_loss
(SmoothL1LossV2, SmoothL1LossGradV2: detection's box loss) on the device against PyTorch's CPU kernels, with no CPU
fallback."""
import unittest

import torch
import torch.nn.functional as F

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase, forward_backward, relative_error


class ActivationTest(DeviceTestCase):
    def test_leaky_relu_forward_and_backward(self):
        x = torch.randn(4, 9, generator=torch.Generator().manual_seed(0))
        for fn in (lambda t: F.leaky_relu(t), lambda t: F.leaky_relu(t, 0.2),
                   lambda t: torch.nn.LeakyReLU(0.1, inplace=True)(t * 1.0)):
            y_cpu, g_cpu = forward_backward(fn, x)
            y_dev, g_dev = forward_backward(fn, x.to(DEV))
            self.assertLess(relative_error(y_cpu, y_dev), 1e-6)
            self.assertLess(relative_error(g_cpu[0], g_dev[0]), 1e-6)
        self.assertEqual(npu.fallback_ops(), {})

    def test_rounding(self):
        x = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.2, -1.7])
        for fn in (torch.round, torch.floor, torch.ceil):
            self.assertTrue(torch.equal(fn(x), fn(x.to(DEV)).cpu()), fn.__name__)
        self.assertEqual(npu.fallback_ops(), {})

    def test_smooth_l1_loss_forward_and_backward(self):
        g = torch.Generator().manual_seed(1)
        x, y = torch.randn(6, 4, generator=g), torch.randn(6, 4, generator=g)
        for beta in (1.0, 0.2, 0.0):  # 0: the L1 loss
            for reduction in ("mean", "sum", "none"):
                def fn(x, y=y, beta=beta, reduction=reduction):
                    return F.smooth_l1_loss(x, y.to(x.device), reduction=reduction, beta=beta)

                y_cpu, g_cpu = forward_backward(fn, x)
                y_dev, g_dev = forward_backward(fn, x.to(DEV))
                self.assertLess(relative_error(y_cpu, y_dev), 1e-6, (beta, reduction))
                self.assertLess(relative_error(g_cpu[0], g_dev[0]), 1e-6, (beta, reduction))
        # a target broadcast over the batch, as a loss of one box against many predictions
        fn = lambda x: F.smooth_l1_loss(x, y[:1].to(x.device).expand(6, 4), beta=1 / 9)
        self.assertLess(relative_error(forward_backward(fn, x)[0], forward_backward(fn, x.to(DEV))[0]), 1e-6)
        self.assertEqual(npu.fallback_ops(), {})


if __name__ == "__main__":
    unittest.main()
