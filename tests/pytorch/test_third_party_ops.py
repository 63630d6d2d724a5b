"""Ops of libraries other than aten on the device (Note [Autograd fallthrough for every library] in
pytorch/src/cpu_fallback.cpp): torchvision's nms and roi_align, and a user's torch.library op, reach the device's
kernel or the CPU fallback instead of stopping at AutogradPrivateUse1; aten ops keep their autograd."""
import unittest

import torch

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase

try:
    import torchvision
except ImportError:  # pragma: no cover - Debian's python3-torchvision is installed by bootstrap.sh
    torchvision = None

_LIB = torch.library.Library("npuscope_test_third_party", "DEF")
_LIB.define("scale(Tensor x, float s) -> Tensor")
_CPU = torch.library.Library("npuscope_test_third_party", "IMPL", "CPU")
_CPU.impl("scale", lambda x, s: x * s)


@unittest.skipIf(torchvision is None, "torchvision is not installed")
class TorchvisionOpsTest(DeviceTestCase):
    def test_nms_matches_the_cpu(self):
        g = torch.Generator().manual_seed(0)
        xy = torch.rand(200, 2, generator=g) * 100
        boxes = torch.cat([xy, xy + 5 + torch.rand(200, 2, generator=g) * 20], 1)
        scores = torch.rand(200, generator=g)
        keep = torchvision.ops.nms(boxes.to(DEV), scores.to(DEV), 0.5)
        self.assertEqual(keep.device, DEV)
        self.assertTrue(torch.equal(keep.cpu(), torchvision.ops.nms(boxes, scores, 0.5)))

    def test_roi_align_forward_and_backward_match_the_cpu(self):
        g = torch.Generator().manual_seed(1)
        x = torch.randn(2, 4, 16, 16, generator=g)
        rois = torch.tensor([[0, 1.0, 1.0, 9.0, 9.0], [1, 3.0, 2.0, 14.0, 12.0]])
        xc = x.clone().requires_grad_()
        xd = x.to(DEV).requires_grad_()
        yc = torchvision.ops.roi_align(xc, rois, (4, 4), spatial_scale=1.0, sampling_ratio=2)
        yd = torchvision.ops.roi_align(xd, rois.to(DEV), (4, 4), spatial_scale=1.0, sampling_ratio=2)
        self.assertIsNotNone(yd.grad_fn)  # roi_align's own autograd kernel is kept
        self.assertTrue(torch.allclose(yd.detach().cpu(), yc.detach(), atol=1e-6))
        yc.sum().backward()
        yd.sum().backward()
        self.assertTrue(torch.allclose(xd.grad.cpu(), xc.grad, atol=1e-6))


class UserLibraryOpTest(DeviceTestCase):
    def test_an_op_with_only_a_cpu_kernel_runs_through_the_fallback(self):
        x = torch.arange(6.0).reshape(2, 3)
        y = torch.ops.npuscope_test_third_party.scale(x.to(DEV), 2.5)
        self.assertEqual(y.device, DEV)
        self.assertTrue(torch.equal(y.cpu(), x * 2.5))
        self.assertIn("npuscope_test_third_party::scale", npu.fallback_ops())

    def test_aten_ops_keep_their_autograd(self):
        x = torch.ones(3).to(DEV).requires_grad_()
        y = (x * 2).sum()
        self.assertEqual(type(y.grad_fn).__name__, "SumBackward0")
        y.backward()
        self.assertTrue(torch.equal(x.grad.cpu(), torch.full((3,), 2.0)))


if __name__ == "__main__":
    unittest.main()
