"""GroupNorm on the device (GroupNormV2, GroupNormGrad) against PyTorch's CPU kernels, forward and backward, with and
without affine parameters, 2-D and 4-D inputs, and a U-Net-like block with GroupNorm, a transposed convolution and
bilinear upsampling trained a step: no CPU fallback."""
import unittest

import torch
import torch.nn.functional as F

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase, relative_error


class GroupNormTest(DeviceTestCase):
    def test_group_norm_forward_and_backward(self):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(2, 6, 5, 4, generator=g)
        w, b = torch.randn(6, generator=g), torch.randn(6, generator=g)
        self.check(lambda x, w, b: F.group_norm(x, 3, w, b), x, w, b, tol=1e-5)
        self.check(lambda x: F.group_norm(x, 2), x, tol=1e-5)
        self.check(lambda x, w, b: F.group_norm(x, 6, w, b, eps=1e-3), x, w, b, tol=1e-5)  # instance-norm-like
        self.check(lambda x, w, b: F.group_norm(x, 1, w, b), torch.randn(3, 6, generator=g), w, b, tol=1e-5)
        self.assertEqual(npu.fallback_ops(), {})

    def test_a_unet_block_trains_a_step(self):
        torch.manual_seed(0)

        def block():
            return torch.nn.Sequential(
                torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.GroupNorm(4, 8), torch.nn.SiLU(),
                torch.nn.Conv2d(8, 8, 3, stride=2, padding=1), torch.nn.GroupNorm(2, 8), torch.nn.ReLU(),
                torch.nn.ConvTranspose2d(8, 4, 2, stride=2), torch.nn.Upsample(scale_factor=2, mode="bilinear"),
                torch.nn.AvgPool2d(2), torch.nn.Conv2d(4, 2, 1))
        cpu_model, dev_model = block(), block()
        dev_model.load_state_dict(cpu_model.state_dict())
        dev_model.to(DEV)
        x = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(1))
        for model, dev in ((cpu_model, "cpu"), (dev_model, DEV)):
            model(x.to(dev)).square().mean().backward()
        for (name, a), b in zip(cpu_model.named_parameters(), dev_model.parameters()):
            self.assertLess(relative_error(a.grad, b.grad), 1e-4, name)
        self.assertEqual(npu.fallback_ops(), {})


if __name__ == "__main__":
    unittest.main()
