"""Native gathers, scatters, advanced indexing and norms against PyTorch's CPU kernels, forward and backward, with no
CPU fallback: gather (GatherElements), scatter / scatter_add (ScatterElements), x[idx], x[:, idx], x[i, j] (Gather,
GatherND) and their assignments (index_put_: ScatterElements, ScatterND), norm with p = 1 or 2 (ReduceL1, ReduceL2)
and clip_grad_norm_."""
import unittest

import torch

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase, relative_error


def _gen(seed):
    return torch.Generator().manual_seed(seed)


class IndexingTest(DeviceTestCase):
    def test_gather_forward_and_backward(self):
        x = torch.randn(4, 6, generator=_gen(0))
        idx = torch.randint(0, 6, (4, 3), generator=_gen(1))
        self.check(lambda x, i: torch.gather(x, 1, i), x, idx)
        self.check(lambda x, i: torch.gather(x, -1, i), x, idx)
        idx0 = torch.randint(0, 4, (2, 6), generator=_gen(2))
        self.check(lambda x, i: x.gather(0, i), x, idx0)
        self.assertEqual(npu.fallback_ops(), {})

    def test_scatter_variants(self):
        x = torch.randn(5, 4, generator=_gen(3))
        idx = torch.tensor([[0, 1, 2, 3], [4, 0, 1, 2]])
        src = torch.randn(3, 4, generator=_gen(4))
        self.check(lambda x, s: x.scatter(0, idx.to(x.device), s), x, src[:2])
        self.check(lambda x, s: x.scatter_add(0, idx.to(x.device), s), x, src[:2])
        # A src larger than index: only its [2, 4] corner is used (PyTorch has no backward for it).
        self.assertTrue(torch.equal(x.scatter(0, idx, src), x.to(DEV).scatter(0, idx.to(DEV), src.to(DEV)).cpu()))
        dup = torch.tensor([[0, 0, 1, 1]])  # duplicates accumulate under add
        for reduce in ("add", "multiply"):
            cpu = x.clone().scatter_(1, dup, src[:1], reduce=reduce)
            dev = x.to(DEV).scatter_(1, dup.to(DEV), src[:1].to(DEV), reduce=reduce)
            self.assertLess(relative_error(cpu, dev), 1e-6, reduce)
        cols = torch.tensor([[0, 3], [2, 1]])
        cpu = x.clone().scatter_(1, cols, 7.5)
        dev = x.to(DEV).scatter_(1, cols.to(DEV), 7.5)
        self.assertTrue(torch.equal(cpu, dev.cpu()))
        ones = torch.zeros(5).to(DEV).scatter_add_(0, torch.tensor([1, 1, 3]).to(DEV), torch.ones(3).to(DEV))
        self.assertEqual(ones.cpu().tolist(), [0, 2, 0, 1, 0])
        self.assertEqual(npu.fallback_ops(), {})

    def test_advanced_indexing_forward_and_backward(self):
        x = torch.randn(6, 5, 4, generator=_gen(5))
        rows = torch.tensor([4, 0, 4, 2])  # a duplicate: its gradient adds up
        cols = torch.tensor([1, 3, 0, 0])
        self.check(lambda x: x[rows.to(x.device)], x)
        self.check(lambda x: x[:, cols.to(x.device)], x)
        self.check(lambda x: x[:, :, torch.tensor([3, 3, 1]).to(x.device)], x)
        self.check(lambda x: x[rows.to(x.device), cols.to(x.device)], x)
        self.check(lambda x: x[rows.view(2, 2).to(x.device)], x)
        self.check(lambda x: x[torch.tensor([-1, 0]).to(x.device)], x)
        self.check(lambda x: x[rows], x)  # a host index on a device tensor
        self.assertEqual(npu.fallback_ops(), {})

    def test_index_put(self):
        x = torch.randn(6, 5, generator=_gen(6))
        v = torch.randn(3, 5, generator=_gen(7))
        rows = torch.tensor([5, 1, 3])
        for accumulate in (False, True):
            cpu = x.clone().index_put_((rows,), v, accumulate=accumulate)
            dev = x.to(DEV).index_put_((rows.to(DEV),), v.to(DEV), accumulate=accumulate)
            self.assertLess(relative_error(cpu, dev), 1e-6)
        dup = torch.tensor([2, 2, 0])
        cpu = x.clone().index_put_((dup,), v, accumulate=True)
        dev = x.to(DEV).index_put_((dup.to(DEV),), v.to(DEV), accumulate=True)
        self.assertLess(relative_error(cpu, dev), 1e-6)
        cpu, dev = x.clone(), x.to(DEV)
        cpu[rows, torch.tensor([0, 4, 2])] = -1.0
        dev[rows.to(DEV), torch.tensor([0, 4, 2]).to(DEV)] = -1.0
        self.assertTrue(torch.equal(cpu, dev.cpu()))
        cpu[:, torch.tensor([1, 3])] = torch.tensor([10.0, 20.0])
        dev[:, torch.tensor([1, 3]).to(DEV)] = torch.tensor([10.0, 20.0]).to(DEV)
        self.assertTrue(torch.equal(cpu, dev.cpu()))
        self.assertEqual(npu.fallback_ops(), {})

    def test_a_boolean_mask_still_works_through_the_fallback(self):
        x = torch.randn(4, 3, generator=_gen(8))
        mask = x > 0
        self.assertTrue(torch.equal(x[mask], x.to(DEV)[mask.to(DEV)].cpu()))


class SelectionTest(DeviceTestCase):
    def test_topk_and_sort_forward_and_backward(self):
        x = torch.randn(5, 7, generator=_gen(11))
        self.check(lambda x: torch.topk(x, 3).values, x)
        self.check(lambda x: torch.topk(x, 2, dim=0, largest=False).values, x)
        self.check(lambda x: torch.sort(x, dim=1, descending=True).values, x)
        self.check(lambda x: torch.sort(x, dim=0).values, x)
        for fn in (lambda t: torch.topk(t, 4).indices, lambda t: torch.sort(t, 1).indices, lambda t: t.argsort(0),
                   lambda t: torch.sort(t.round(), stable=True, dim=1).indices):  # ties: by index when stable
            self.assertTrue(torch.equal(fn(x), fn(x.to(DEV)).cpu()))
        self.assertEqual(npu.fallback_ops(), {})

    def test_roll_forward_and_backward(self):
        x = torch.randn(3, 4, 5, generator=_gen(12))
        self.check(lambda x: torch.roll(x, 2, 1), x)
        self.check(lambda x: torch.roll(x, (-1, 3), (0, 2)), x)
        self.check(lambda x: torch.roll(x, 7), x)  # flattened
        self.check(lambda x: torch.roll(x, (1, 1), (1, 1)), x)  # the same dim twice
        self.assertEqual(npu.fallback_ops(), {})


class NormTest(DeviceTestCase):
    def test_norms_forward_and_backward(self):
        x = torch.randn(4, 6, generator=_gen(9))
        self.check(lambda x: torch.norm(x), x, tol=1e-5)
        self.check(lambda x: x.norm(1), x, tol=1e-5)
        self.check(lambda x: x.norm(2, dim=1, keepdim=True), x, tol=1e-5)
        self.check(lambda x: torch.nn.functional.normalize(x, dim=0), x, tol=1e-5)
        self.assertEqual(npu.fallback_ops(), {})

    def test_clip_grad_norm_runs_on_the_device(self):
        torch.manual_seed(0)
        cpu_model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
        dev_model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
        dev_model.load_state_dict(cpu_model.state_dict())
        dev_model.to(DEV)
        x = torch.randn(5, 8, generator=_gen(10))
        norms = []
        for model, dev in ((cpu_model, "cpu"), (dev_model, DEV)):
            (model(x.to(dev)) ** 2).sum().mul(100).backward()
            norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5).item())
        self.assertAlmostEqual(norms[0], norms[1], delta=1e-5 * norms[0])
        for a, b in zip(cpu_model.parameters(), dev_model.parameters()):
            self.assertLess(relative_error(a.grad, b.grad), 1e-5)
        self.assertEqual(npu.fallback_ops(), {})


if __name__ == "__main__":
    unittest.main()
