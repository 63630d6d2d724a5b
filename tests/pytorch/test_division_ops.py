"""remainder, div with rounding_mode='floor' / 'trunc' and floor_divide on the device (CANN's FloorMod, FloorDiv and
TruncateDiv) against PyTorch's CPU kernels, tensor and Python-number operands, forward and backward, with no
CPU fallback; integer operands still go to the fallback."""
import unittest

import torch

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase, relative_error


class DivisionTest(DeviceTestCase):
    def test_values_match_the_cpu(self):
        g = torch.Generator().manual_seed(0)
        a = torch.randn(64, generator=g) * 10
        b = torch.randn(64, generator=g).abs().add(0.3) * torch.where(torch.rand(64, generator=g) > 0.5, 1.0, -1.0)
        a[:4] = torch.tensor([-7.0, 7.0, 5.5, -5.5])
        b[:4] = torch.tensor([3.0, -3.0, 2.0, 2.0])
        cases = [
            lambda a, b: torch.remainder(a, b),
            lambda a, b: a % b,
            lambda a, b: a % 2.5,
            lambda a, b: torch.div(a, b, rounding_mode="floor"),
            lambda a, b: torch.div(a, b, rounding_mode="trunc"),
            lambda a, b: a // b,
            lambda a, b: torch.floor_divide(a, 3.0),
            lambda a, b: a.view(8, 8) % b.view(8, 8)[:1],  # broadcast
        ]
        for i, fn in enumerate(cases):
            with self.subTest(case=i):
                cpu, dev = fn(a, b), fn(a.to(DEV), b.to(DEV))
                self.assertEqual(dev.device, DEV)
                self.assertTrue(torch.equal(cpu, dev.cpu()), (cpu - dev.cpu()).abs().max())
        self.assertEqual(npu.fallback_ops(), {})

    def test_in_place_and_half(self):
        a = torch.tensor([-7.0, 7.5, 3.25])
        d = a.to(DEV)
        d.remainder_(2.0)
        self.assertTrue(torch.equal(d.cpu(), a.remainder(2.0)))
        d = a.to(DEV)
        d.div_(2.0, rounding_mode="floor")
        self.assertTrue(torch.equal(d.cpu(), a.div(2.0, rounding_mode="floor")))
        h = a.half()
        self.assertTrue(torch.equal((h.to(DEV) % 2).cpu(), h.float().remainder(2).half()))
        self.assertEqual(npu.fallback_ops(), {})

    def test_gradients_match_the_cpu(self):
        a = torch.tensor([-7.0, 7.5, 3.25, 1.0], requires_grad=True)
        b = torch.tensor([3.0, 2.0, -1.5, 4.0], requires_grad=True)
        (torch.remainder(a, b) * torch.arange(1.0, 5.0)).sum().backward()
        ad, bd = a.detach().to(DEV).requires_grad_(), b.detach().to(DEV).requires_grad_()
        (torch.remainder(ad, bd) * torch.arange(1.0, 5.0).to(DEV)).sum().backward()
        self.assertLess(relative_error(a.grad, ad.grad), 1e-6)
        self.assertLess(relative_error(b.grad, bd.grad), 1e-6)

    def test_integers_go_to_the_fallback_with_pytorchs_values(self):
        a, b = torch.tensor([-7, 7, 5]), torch.tensor([3, -3, 2])
        self.assertTrue(torch.equal((a.to(DEV) % b.to(DEV)).cpu(), a % b))
        self.assertTrue(torch.equal((a.to(DEV) // b.to(DEV)).cpu(), a // b))
        self.assertEqual(npu.fallback_ops(), {"aten::remainder": 1, "aten::floor_divide": 1})


if __name__ == "__main__":
    unittest.main()
