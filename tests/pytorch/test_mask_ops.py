"""Boolean masks on the device against PyTorch's CPU kernels, forward and backward, with no CPU fallback:
nonzero (NonZero after the host counts the mask: Note [Data-dependent shapes] in kernels_gather_scatter.cpp),
masked_select and its backward masked_scatter_ (Gather, ScatterElements), x[mask] and x[mask] = v (GatherND,
ScatterND), label smoothing's and detection's uses of them."""
import unittest

import torch
import torch.nn.functional as F

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase


def _gen(seed):
    return torch.Generator().manual_seed(seed)


class MaskOpsTest(DeviceTestCase):
    def test_nonzero_of_every_rank_and_dtype(self):
        for x in (torch.tensor([0.0, 1.5, 0.0, -2.0, float("nan")]),
                  torch.randn(3, 4, 5, generator=_gen(0)).gt(0.3),
                  torch.tensor([[0, 3], [7, 0]], dtype=torch.int32),
                  torch.zeros(2, 3),
                  torch.ones(2, 2, 2, dtype=torch.bool)):
            dev = torch.nonzero(x.to(DEV))
            self.assertEqual(dev.device, DEV)
            self.assertEqual(dev.dtype, torch.int64)
            self.assertTrue(torch.equal(dev.cpu(), torch.nonzero(x)), x)
            # as_tuple: one index tensor per dim, as torch.where(mask) gives them
            for a, b in zip(torch.nonzero(x.to(DEV), as_tuple=True), torch.nonzero(x, as_tuple=True)):
                self.assertTrue(torch.equal(a.cpu(), b))
        self.assertEqual(npu.fallback_ops(), {})

    def test_masked_select_forward_and_backward(self):
        x = torch.randn(4, 5, generator=_gen(1))
        mask = torch.randn(4, 5, generator=_gen(2)) > 0
        self.check(lambda x: torch.masked_select(x, mask.to(x.device)), x)
        row_mask = torch.tensor([True, False, True, True, False])  # broadcast over the rows
        self.check(lambda x: x.masked_select(row_mask.to(x.device)) * 2, x)
        none = x.to(DEV).masked_select(torch.zeros(4, 5, dtype=torch.bool, device=DEV))
        self.assertEqual((none.device, none.shape), (DEV, torch.Size([0])))
        self.assertEqual(npu.fallback_ops(), {})

    def test_masked_scatter(self):
        x = torch.randn(3, 4, generator=_gen(3))
        mask = torch.tensor([[True, False, True, False], [False, False, True, True], [True, True, True, True]])
        source = torch.randn(12, generator=_gen(4))
        cpu = x.clone().masked_scatter_(mask, source)
        dev = x.to(DEV).masked_scatter_(mask.to(DEV), source.to(DEV))
        self.assertTrue(torch.equal(cpu, dev.cpu()))
        # into a transposed (non-contiguous) tensor, with a mask broadcast over it
        cpu = x.t().clone().t().masked_scatter_(mask[0], source)
        dev = x.to(DEV).t().clone().t().masked_scatter_(mask[0].to(DEV), source.to(DEV))
        self.assertTrue(torch.equal(cpu, dev.cpu()))
        with self.assertRaisesRegex(RuntimeError, "source has only 2"):
            x.to(DEV).masked_scatter_(mask.to(DEV), source[:2].to(DEV))
        self.assertEqual(npu.fallback_ops(), {})

    def test_boolean_mask_indexing_and_assignment(self):
        x = torch.randn(4, 3, 2, generator=_gen(5))
        full = x > 0
        rows = torch.tensor([True, False, True, True])
        self.check(lambda x: x[full.to(x.device)], x)
        self.check(lambda x: x[rows.to(x.device)], x)
        self.check(lambda x: x[:, torch.tensor([False, True, True], device=x.device)], x)
        self.check(lambda x: x[rows.to(x.device), 1], x)
        for value in (0.0, torch.tensor(3.5)):
            cpu, dev = x.clone(), x.to(DEV)
            cpu[full] = value
            dev[full.to(DEV)] = value.to(DEV) if torch.is_tensor(value) else value
            self.assertTrue(torch.equal(cpu, dev.cpu()))
        cpu, dev = x.clone(), x.to(DEV)
        cpu[rows] += torch.ones(3, 2)
        dev[rows.to(DEV)] += torch.ones(3, 2).to(DEV)
        self.assertTrue(torch.equal(cpu, dev.cpu()))
        cpu, dev = x.clone(), x.to(DEV)
        cpu.masked_fill_(full, -1.0)
        dev.masked_fill_(full.to(DEV), -1.0)
        self.assertTrue(torch.equal(cpu, dev.cpu()))
        with self.assertRaises(IndexError):
            x.to(DEV)[torch.tensor([True, False], device=DEV)]
        self.assertEqual(npu.fallback_ops(), {})

    def test_product_of_masks_is_their_and(self):
        a, b = torch.tensor([True, False, True]), torch.tensor([True, True, False])
        self.assertEqual((a.to(DEV) * b.to(DEV)).cpu().tolist(), [True, False, False])
        self.assertEqual(npu.fallback_ops(), {})

    def test_label_smoothing_and_ignore_index(self):
        logits = torch.randn(6, 5, generator=_gen(6))
        target = torch.tensor([0, 4, -100, 2, 2, -100])
        self.check(lambda z: F.cross_entropy(z, target.to(z.device), label_smoothing=0.1, ignore_index=-100), logits,
                   tol=1e-5)
        # The masks run native, and so does 1.13's backward of `loss * 0.9`, which multiplies the gradient by a 0-d
        # float64 CPU tensor (at::scalar_to_tensor, not a wrapped number): a float64 product, an AI CPU task.
        self.assertEqual(npu.fallback_ops(), {})


if __name__ == "__main__":
    unittest.main()
