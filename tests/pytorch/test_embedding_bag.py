"""nn.EmbeddingBag / F.embedding_bag on the device against PyTorch's CPU kernels, forward and the weight's gradient,
with no CPU fallback: modes sum and mean (EmbeddingBag, an AI CPU task; its backward Gather + EmbeddingDenseGrad) and
max (EmbeddingBag's max_indices; its backward a scatter-add), offsets or 2-D input, empty bags, padding_idx,
per-sample weights and their own gradient, include_last_offset, out-of-range indices as a kernel fault, and the text
classifier of PyTorch's tutorial (EmbeddingBag + Linear) trained a few steps. float64 runs on the fallback, counted."""
import copy
import unittest

import torch
import torch.nn.functional as F

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase


class EmbeddingBagTest(DeviceTestCase):
    def test_forward_and_weight_gradient_match_the_cpu(self):
        g = torch.Generator().manual_seed(0)
        weight = torch.randn(10, 5, generator=g)
        idx = torch.tensor([0, 2, 4, 5, 4, 3, 2, 9, 9, 1])
        offsets = torch.tensor([0, 3, 3, 7])
        psw = torch.rand(10, generator=g)
        cases = {
            "sum": dict(mode="sum"),
            "mean": dict(mode="mean"),
            "padding": dict(mode="mean", padding_idx=4),
            "weighted": dict(mode="sum", per_sample_weights=psw),
            "last_offset": dict(mode="sum", include_last_offset=True),
        }
        for name, kw in cases.items():
            with self.subTest(case=name):
                off = torch.cat([offsets, torch.tensor([10])]) if kw.get("include_last_offset") else offsets
                dev_kw = {k: (v.to(DEV) if torch.is_tensor(v) else v) for k, v in kw.items()}
                self.check(lambda w: F.embedding_bag(idx.to(w.device), w, off.to(w.device),
                                                     **(dev_kw if w.device == DEV else kw)), weight)
        # 2-D input: bags of equal length, no offsets.
        self.check(lambda w: F.embedding_bag(idx.view(2, 5).to(w.device), w, mode="mean"), weight)
        self.assertEqual(npu.fallback_ops(), {})

    def test_scale_grad_by_freq_scales_each_row_by_its_count(self):
        # 1.13's CPU kernel scales by the count of the wrong index (rows of indices seen once get 1/2 here, the row
        # seen twice 2); the device scales as F.embedding does, which the reference below computes on the CPU.
        weight = torch.randn(10, 5)
        idx, offsets = torch.tensor([0, 2, 4, 5, 4, 3, 2, 9, 9, 1]), torch.tensor([0, 3, 3, 7])
        bag = torch.tensor([0, 0, 0, 2, 2, 2, 2, 3, 3, 3])
        grad_out = torch.randn(4, 5)
        ref = weight.clone().requires_grad_()
        rows = F.embedding(idx, ref, scale_grad_by_freq=True)
        torch.zeros(4, 5).index_add(0, bag, rows).backward(grad_out)
        dev = weight.to(DEV).requires_grad_()
        F.embedding_bag(idx.to(DEV), dev, offsets.to(DEV), mode="sum", scale_grad_by_freq=True).backward(
            grad_out.to(DEV))
        self.assertTrue(torch.allclose(dev.grad.cpu(), ref.grad, atol=1e-6))
        self.assertEqual(npu.fallback_ops(), {})

    def test_max_mode_matches_the_cpu(self):
        # Integer-valued rows make ties common: the earlier index wins both the value and the gradient.
        g = torch.Generator().manual_seed(3)
        for name, weight in (("random", torch.randn(13, 7, generator=g)),
                             ("ties", torch.randint(-2, 3, (13, 7), generator=g).float())):
            idx = torch.randint(0, 13, (23,), generator=g)
            offsets = torch.tensor([0, 4, 4, 9, 16, 16, 22])  # empty bags 1 and 4, a bag of one at the end
            for kw in (dict(), dict(padding_idx=int(idx[22])), dict(padding_idx=int(idx[0])),
                       dict(include_last_offset=True)):
                with self.subTest(weight=name, **kw):
                    off = torch.cat([offsets, torch.tensor([23])]) if kw.get("include_last_offset") else offsets
                    self.check(lambda w: F.embedding_bag(idx.to(w.device), w, off.to(w.device), mode="max", **kw),
                               weight)
                    want = torch.ops.aten._embedding_bag(weight, idx, off, False, 2, False, None,
                                                         kw.get("include_last_offset", False), kw.get("padding_idx", -1))
                    got = torch.ops.aten._embedding_bag(weight.to(DEV), idx.to(DEV), off.to(DEV), False, 2, False, None,
                                                        kw.get("include_last_offset", False), kw.get("padding_idx", -1))
                    for part, a, b in zip(("output", "offset2bag", "bag_size", "max_indices"), want, got):
                        self.assertTrue(torch.equal(a, b.cpu()), part)
            # 2-D input and int32 indices.
            self.check(lambda w: F.embedding_bag(idx[:20].view(4, 5).to(w.device), w, mode="max"), weight)
            self.check(lambda w: F.embedding_bag(idx.int().to(w.device), w, offsets.int().to(w.device), mode="max"),
                       weight)
        layer = torch.nn.EmbeddingBag(11, 6, mode="max", padding_idx=0)
        self.check(lambda w: F.embedding_bag(torch.tensor([0, 0, 3, 7, 0]).to(w.device), w,
                                             torch.tensor([0, 2]).to(w.device), mode="max", padding_idx=0),
                   layer.weight.detach())  # bag 0 is all padding: zeros, and no gradient
        self.assertEqual(npu.fallback_ops(), {})

    def test_per_sample_weights_gradient_matches_the_cpu(self):
        g = torch.Generator().manual_seed(4)
        weight, psw = torch.randn(9, 5, generator=g), torch.randn(17, generator=g)
        idx = torch.randint(0, 9, (17,), generator=g)
        offsets = torch.tensor([0, 3, 3, 11])
        for kw in (dict(), dict(padding_idx=int(idx[4])), dict(include_last_offset=True)):
            for index_dtype in (torch.long, torch.int):
                with self.subTest(index_dtype=index_dtype, **kw):
                    off = torch.cat([offsets, torch.tensor([17])]) if kw.get("include_last_offset") else offsets
                    self.check(lambda w, p: F.embedding_bag(idx.to(index_dtype).to(w.device), w,
                                                            off.to(index_dtype).to(w.device), mode="sum",
                                                            per_sample_weights=p, **kw), weight, psw)
        self.assertEqual(npu.fallback_ops(), {})

    def test_float64_runs_on_the_fallback(self):
        w = torch.randn(6, 3, dtype=torch.float64)
        idx, off = torch.tensor([1, 5, 0, 2]), torch.tensor([0, 2])
        got = F.embedding_bag(idx.to(DEV), w.to(DEV), off.to(DEV), mode="max")
        self.assertTrue(torch.equal(got.cpu(), F.embedding_bag(idx, w, off, mode="max")))
        self.assertEqual(npu.fallback_ops(), {"aten::_embedding_bag_forward_only": 1})

    def test_an_index_outside_the_weight_is_a_kernel_fault(self):
        w = torch.randn(6, 3).to(DEV)
        for mode in ("sum", "max"):
            with self.subTest(mode=mode):
                with self.assertRaisesRegex(RuntimeError, "EmbeddingBag.*9"):
                    F.embedding_bag(torch.tensor([1, 9, 0]).to(DEV), w, torch.tensor([0, 2]).to(DEV), mode=mode).cpu()
        self.assertEqual(npu.fallback_ops(), {})

    def test_text_classifier_trains_as_on_the_cpu(self):
        torch.manual_seed(0)

        class TextClassifier(torch.nn.Module):  # PyTorch's text classification tutorial
            def __init__(self):
                super().__init__()
                self.embedding = torch.nn.EmbeddingBag(50, 16, mode="mean")
                self.fc = torch.nn.Linear(16, 4)

            def forward(self, text, offsets):
                return self.fc(self.embedding(text, offsets))

        cpu = TextClassifier()
        dev = copy.deepcopy(cpu).to(DEV)
        opts = [torch.optim.SGD(m.parameters(), lr=0.5) for m in (cpu, dev)]
        for _ in range(4):
            lengths = torch.randint(1, 8, (6,))
            text = torch.randint(0, 50, (int(lengths.sum()),))
            offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
            label = torch.randint(0, 4, (6,))
            for model, opt, device in ((cpu, opts[0], "cpu"), (dev, opts[1], DEV)):
                loss = F.cross_entropy(model(text.to(device), offsets.to(device)), label.to(device))
                opt.zero_grad()
                loss.backward()
                opt.step()
        for (name, a), b in zip(cpu.named_parameters(), dev.parameters()):
            self.assertLess((a - b.detach().cpu()).abs().max().item(), 1e-5, name)
        self.assertEqual(npu.fallback_ops(), {})


if __name__ == "__main__":
    unittest.main()
