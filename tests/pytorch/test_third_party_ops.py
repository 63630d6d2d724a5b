"""Ops of libraries other than aten on the device (Note [Autograd fallthrough for every library] in
pytorch/src/cpu_fallback.cpp). torchvision's nms, roi_align and its backward run as device kernels against torchvision's
CPU kernels (Note [torchvision on the device] in pytorch/src/kernels_torchvision.cpp), with the cases where the
emulator's ops differ on the CPU fallback, and a Faster R-CNN's eval forward runs with no fallback; a user's
torch.library op reaches the fallback instead of stopping at AutogradPrivateUse1; aten ops keep their autograd."""
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


def random_boxes(n, seed):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g) * 100
    return torch.cat([xy, xy + 5 + torch.rand(n, 2, generator=g) * 20], 1), torch.rand(n, generator=g)


@unittest.skipIf(torchvision is None, "torchvision is not installed")
class TorchvisionOpsTest(DeviceTestCase):
    """nms, roi_align and its backward run as device kernels (pytorch/src/kernels_torchvision.cpp, Note [torchvision
    on the device]); the cases where the emulator's ops differ from torchvision's go to the CPU fallback."""

    def test_nms_matches_the_cpu(self):
        boxes, scores = random_boxes(200, 0)
        for threshold in (0.0, 0.3, 0.5, 1.0):
            keep = torchvision.ops.nms(boxes.to(DEV), scores.to(DEV), threshold)
            self.assertEqual(keep.device, DEV)
            self.assertEqual(keep.dtype, torch.int64)
            self.assertTrue(torch.equal(keep.cpu(), torchvision.ops.nms(boxes, scores, threshold)), threshold)
        # Equal scores, exact IoUs of 1/2 (not above the threshold) and empty boxes.
        boxes = torch.tensor([[0.0, 0, 2, 1], [0, 0, 1, 1], [0, 0, 2, 1], [5, 5, 5, 9], [5, 5, 6, 9]])
        scores = torch.tensor([0.5, 0.9, 0.5, 0.7, 0.6])
        for threshold in (0.5, 0.49):
            keep = torchvision.ops.nms(boxes.to(DEV), scores.to(DEV), threshold)
            self.assertTrue(torch.equal(keep.cpu(), torchvision.ops.nms(boxes, scores, threshold)), threshold)
        empty = torchvision.ops.nms(torch.zeros(0, 4).to(DEV), torch.zeros(0).to(DEV), 0.5)
        self.assertEqual((empty.device, empty.shape, empty.dtype), (DEV, (0,), torch.int64))
        self.assertEqual(npu.fallback_ops(), {})

    def test_batched_nms_matches_the_cpu(self):
        boxes, scores = random_boxes(300, 2)
        idxs = torch.randint(0, 5, (300,), generator=torch.Generator().manual_seed(3))
        keep = torchvision.ops.batched_nms(boxes.to(DEV), scores.to(DEV), idxs.to(DEV), 0.4)
        self.assertTrue(torch.equal(keep.cpu(), torchvision.ops.batched_nms(boxes, scores, idxs, 0.4)))
        self.assertEqual(npu.fallback_ops(), {})

    def test_nms_where_onnx_differs_falls_back(self):
        # A NaN score (torchvision keeps it first), a box with x2 < x1, a threshold above 1.
        boxes, scores = random_boxes(20, 4)
        nan_scores = scores.clone()
        nan_scores[3] = float("nan")
        flipped = boxes.clone()
        flipped[5] = flipped[5, [2, 1, 0, 3]]
        for b, s, t in ((boxes, nan_scores, 0.5), (flipped, scores, 0.5), (boxes, scores, 1.5)):
            npu.reset_fallback_ops()
            keep = torchvision.ops.nms(b.to(DEV), s.to(DEV), t)
            self.assertTrue(torch.equal(keep.cpu(), torchvision.ops.nms(b, s, t)))
            self.assertEqual(npu.fallback_ops(), {"torchvision::nms": 1})

    def test_roi_align_forward_and_backward_match_the_cpu(self):
        g = torch.Generator().manual_seed(1)
        x = torch.randn(2, 4, 16, 16, generator=g)
        # Rois of batch 1 and 0, one partly outside the map, one smaller than a pixel at scale 0.5.
        rois = torch.tensor([[0, 1.0, 1.0, 9.0, 9.0], [1, 3.0, 2.0, 14.0, 12.0], [1, -6.0, 20.0, 30.0, 40.0],
                             [0, 7.0, 7.0, 7.5, 7.2]])
        for aligned in (True, False):
            for ratio in (0, 2):
                for scale in (1.0, 0.5):
                    def fn(t):
                        return torchvision.ops.roi_align(t, rois.to(t.device), (4, 3), spatial_scale=scale,
                                                         sampling_ratio=ratio, aligned=aligned)
                    # tol: up to 60 samples a bin summed in float32, whose positions torchvision computes in
                    # float32 and the emulator in float64.
                    with self.subTest(aligned=aligned, ratio=ratio, scale=scale):
                        self.check(fn, x, tol=1e-5)
        self.assertEqual(npu.fallback_ops(), {})

    def test_roi_align_keeps_its_autograd_and_sums_a_broadcast_gradient(self):
        x = torch.randn(2, 4, 16, 16, generator=torch.Generator().manual_seed(5))
        rois = torch.tensor([[0, 1.0, 1.0, 9.0, 9.0], [1, 3.0, 2.0, 14.0, 12.0]])
        xc = x.clone().requires_grad_()
        xd = x.to(DEV).requires_grad_()
        yc = torchvision.ops.roi_align(xc, rois, (4, 4), spatial_scale=1.0, sampling_ratio=2)
        yd = torchvision.ops.roi_align(xd, rois.to(DEV), (4, 4), spatial_scale=1.0, sampling_ratio=2)
        self.assertIsNotNone(yd.grad_fn)  # roi_align's own autograd kernel is kept
        self.assertTrue(torch.allclose(yd.detach().cpu(), yc.detach(), atol=1e-6))
        yc.sum().backward()  # an expanded (stride 0) gradient
        yd.sum().backward()
        self.assertTrue(torch.allclose(xd.grad.cpu(), xc.grad, atol=1e-6))
        self.assertEqual(npu.fallback_ops(), {})

    def test_roi_align_as_a_box_list_and_in_float16(self):
        x = torch.randn(2, 3, 10, 12, generator=torch.Generator().manual_seed(6))
        boxes = [torch.tensor([[1.0, 1.0, 6.0, 8.0]]), torch.tensor([[0.0, 2.0, 11.0, 9.0], [4.0, 4.0, 5.0, 5.0]])]
        y = torchvision.ops.roi_align(x.to(DEV), [b.to(DEV) for b in boxes], 3, aligned=True)
        self.assertTrue(torch.allclose(y.cpu(), torchvision.ops.roi_align(x, boxes, 3, aligned=True), atol=1e-6))
        half = torchvision.ops.roi_align(x.half().to(DEV), [b.half().to(DEV) for b in boxes], 3, aligned=True)
        self.assertEqual(half.dtype, torch.float16)
        self.assertTrue(torch.allclose(half.cpu().float(), y.cpu(), atol=1e-2))
        self.assertEqual(npu.fallback_ops(), {})

    def test_roi_align_in_float64_falls_back(self):
        x = torch.randn(1, 2, 8, 8, dtype=torch.float64)
        rois = torch.tensor([[0, 1.0, 1.0, 6.0, 6.0]], dtype=torch.float64)
        y = torchvision.ops.roi_align(x.to(DEV), rois.to(DEV), 2, sampling_ratio=2)
        self.assertTrue(torch.allclose(y.cpu(), torchvision.ops.roi_align(x, rois, 2, sampling_ratio=2)))
        self.assertEqual(npu.fallback_ops(), {"torchvision::roi_align": 1})


@unittest.skipIf(torchvision is None, "torchvision is not installed")
class FasterRCNNTest(DeviceTestCase):
    def model(self):
        torch.manual_seed(0)
        m = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None,
                                                                                num_classes=5)
        m.roi_heads.score_thresh = 0.0
        # Random weights leave the backbone's features near 1e-8, where every score ties: one pass in train mode
        # sets the batch norms' statistics (as a trained model's are), and a smaller box predictor spreads the
        # scores instead of saturating them.
        for mod in m.backbone.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.momentum = 1.0
        m.backbone.train()
        with torch.no_grad():
            m.backbone(m.transform([torch.rand(3, 96, 128), torch.rand(3, 80, 80)])[0].tensors)
            for p in m.roi_heads.box_predictor.parameters():
                p.mul_(0.02)
        return m.eval()

    def test_eval_forward_matches_the_cpu_with_no_fallback(self):
        m = self.model()
        images = [torch.rand(3, 96, 128), torch.rand(3, 80, 80)]
        with torch.no_grad():
            want = m(images)
            got = m.to(DEV)([x.to(DEV) for x in images])
        self.assertEqual(npu.fallback_ops(), {})
        for w, g in zip(want, got):
            g = {k: v.cpu() for k, v in g.items()}
            self.assertEqual(g["boxes"].shape, w["boxes"].shape)
            self.assertGreater(w["scores"].unique().numel(), 10)  # not all ties
            self.assertTrue(torch.allclose(g["scores"], w["scores"], atol=1e-5))
            # Each detection has its match among the CPU's (near-equal scores may swap places).
            for box, label in zip(g["boxes"], g["labels"]):
                same = w["boxes"][w["labels"] == label]
                self.assertLess((same - box).abs().max(1).values.min().item(), 1e-2)


    def test_training_step_runs_with_no_fallback(self):
        # randperm (the samplers' shuffles) is a Randperm task: seeded from PyTorch's generator, not its values.
        torch.manual_seed(0)
        m = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None,
                                                                                num_classes=5).to(DEV).train()
        images = [torch.rand(3, 96, 128).to(DEV), torch.rand(3, 80, 80).to(DEV)]
        targets = [{"boxes": torch.tensor([[10.0, 20, 60, 70], [30, 5, 90, 50]]), "labels": torch.tensor([1, 3])},
                   {"boxes": torch.tensor([[5.0, 5, 40, 60]]), "labels": torch.tensor([2])}]
        losses = m(images, [{k: v.to(DEV) for k, v in t.items()} for t in targets])
        loss = sum(losses.values())
        loss.backward()
        self.assertTrue(torch.isfinite(loss.detach().cpu()))
        self.assertEqual(npu.fallback_ops(), {})
        self.assertGreater(m.roi_heads.box_head.fc6.weight.grad.abs().sum().item(), 0)

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
