"""Segmentation's loss on the device: cross_entropy and nll_loss over [N, C, H, W] (aten's nll_loss2d forward and
backward, run as NLLLoss / NLLLossGrad on the pixels' rows as torch_npu does) against PyTorch's CPU kernels, every
reduction, class weights, ignore_index and label smoothing; what the rows cannot take falls back or fails as on the
CPU."""
import unittest

import torch
import torch.nn.functional as F

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase


class NllLoss2dTest(DeviceTestCase):
    def setUp(self):
        super().setUp()
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(2, 5, 6, 7, generator=g)
        self.target = torch.randint(0, 5, (2, 6, 7), generator=g)
        self.target[0, 1, :3] = -100  # ignored pixels
        self.weight = torch.rand(5, generator=g) + 0.5

    def test_cross_entropy_forward_and_backward(self):
        t = self.target.to(DEV)
        for reduction in ("mean", "sum", "none"):
            with self.subTest(reduction=reduction):
                self.check(lambda x: F.cross_entropy(x, t.to(x.device), reduction=reduction), self.x, tol=1e-5)
                w = self.weight
                self.check(lambda x: F.cross_entropy(x, t.to(x.device), weight=w.to(x.device), reduction=reduction),
                           self.x, tol=1e-5)
        t2 = self.target.clamp(min=0).to(DEV)
        self.check(lambda x: F.cross_entropy(x, t2.to(x.device), ignore_index=2), self.x, tol=1e-5)
        self.check(lambda x: F.cross_entropy(x, t.to(x.device), label_smoothing=0.1).float(), self.x, tol=1e-5)
        self.check(lambda x: F.nll_loss(F.log_softmax(x, 1), t.to(x.device)), self.x, tol=1e-5)
        self.assertEqual(npu.fallback_ops(), {})

    def test_half_inputs(self):
        x = self.x.half()
        loss = F.cross_entropy(x.to(DEV), self.target.to(DEV), reduction="none")
        self.assertEqual((loss.dtype, loss.shape), (torch.float16, (2, 6, 7)))
        expected = F.cross_entropy(self.x, self.target, reduction="none")
        self.assertLess((loss.cpu().float() - expected).abs().max().item(), 2e-2)
        self.assertEqual(npu.fallback_ops(), {})

    def test_what_the_rows_cannot_take(self):
        # float64 runs on the CPU fallback; a target of the wrong size fails as on the CPU.
        loss = F.cross_entropy(self.x.double().to(DEV), self.target.to(DEV))
        self.assertAlmostEqual(loss.item(), F.cross_entropy(self.x.double(), self.target).item(), places=12)
        self.assertIn("aten::nll_loss2d_forward", npu.fallback_ops())
        with self.assertRaises(RuntimeError):
            F.cross_entropy(self.x.to(DEV), self.target[:, :5].to(DEV))
        with self.assertRaisesRegex(RuntimeError, "move the target to the device"):
            F.nll_loss(self.x.to(DEV), self.target)

    def test_a_segmentation_step_has_no_fallback(self):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 1))
        x, y = torch.randn(2, 3, 16, 16), torch.randint(0, 4, (2, 16, 16))
        grads = []
        for dev in ("cpu", DEV):
            m = torch.nn.Sequential(*[layer for layer in model]).to(dev) if dev == "cpu" else model.to(dev)
            m.zero_grad()
            F.cross_entropy(m(x.to(dev)), y.to(dev)).backward()
            grads.append([p.grad.cpu().clone() for p in m.parameters()])
        for a, b in zip(*grads):
            self.assertLess((a - b).abs().max().item() / a.abs().max().item(), 1e-4)
        self.assertEqual(npu.fallback_ops(), {})


if __name__ == "__main__":
    unittest.main()
