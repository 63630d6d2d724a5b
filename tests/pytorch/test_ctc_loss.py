"""F.ctc_loss on the device against PyTorch's CPU kernels, forward and backward, with no CPU fallback:
_ctc_loss and _ctc_loss_backward (both overloads) as CTCLossV2 and CTCLossV2Grad (kernels_ctc_loss.cpp),
every reduction, padded and concatenated targets, zero_infinity, another blank, and a Conv1d + CTC
training step."""
import copy
import unittest

import torch
import torch.nn.functional as F

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase, relative_error


def _gen(seed):
    return torch.Generator().manual_seed(seed)


T, N, C = 12, 3, 6
PADDED = torch.tensor([[1, 2, 2, 3], [4, 4, 0, 0], [5, 0, 0, 0]])
INPUT_LENGTHS, TARGET_LENGTHS = [12, 9, 4], [4, 2, 1]
CONCATENATED = torch.tensor([1, 2, 2, 3, 4, 4, 5])


def _ctc(targets, input_lengths, target_lengths, **kwargs):
    """F.ctc_loss of logits [T, N, C] (log_softmax first), with targets and tensor lengths moved to the
    logits' device."""
    def fn(x):
        move = (lambda v: v.to(x.device)) if torch.is_tensor(input_lengths) else (lambda v: v)
        return F.ctc_loss(x.log_softmax(2), targets.to(x.device), move(input_lengths), move(target_lengths),
                          **kwargs)
    return fn


class CtcLossTest(DeviceTestCase):
    def test_every_reduction_and_target_layout(self):
        x = torch.randn(T, N, C, generator=_gen(0))
        for targets in (PADDED, CONCATENATED, PADDED.int()):
            for lengths in ((INPUT_LENGTHS, TARGET_LENGTHS),
                            (torch.tensor(INPUT_LENGTHS), torch.tensor(TARGET_LENGTHS))):
                for reduction in ("none", "mean", "sum"):
                    with self.subTest(targets=targets.shape, lengths=type(lengths[0]), reduction=reduction):
                        self.check(_ctc(targets, *lengths, reduction=reduction), x, tol=1e-5)
        self.assertEqual(npu.fallback_ops(), {})

    def test_zero_infinity_and_another_blank(self):
        x = torch.randn(T, N, C, generator=_gen(1))
        # sample 1 has 3 frames for 3 labels, two of them repeated (4 frames with the blank between)
        targets = torch.tensor([[0, 1, 2, 2], [3, 3, 4, 0], [1, 0, 0, 0]])
        infeasible = ([12, 3, 5], [4, 3, 1])
        for reduction in ("none", "mean", "sum"):
            with self.subTest(reduction=reduction):
                self.check(_ctc(targets, *infeasible, blank=C - 1, reduction=reduction, zero_infinity=True), x,
                           tol=1e-5)
        loss = _ctc(targets, *infeasible, blank=C - 1, reduction="none")(x.to(DEV)).cpu()
        self.assertTrue(torch.isinf(loss[1]))
        self.assertTrue(torch.isfinite(loss[[0, 2]]).all())
        self.assertEqual(npu.fallback_ops(), {})

    def test_both_overloads_of_the_aten_ops(self):
        lp = torch.randn(T, N, C, generator=_gen(2)).log_softmax(2)
        il, tl = torch.tensor(INPUT_LENGTHS), torch.tensor(TARGET_LENGTHS)
        g = torch.randn(N, generator=_gen(3))
        cpu = torch.ops.aten._ctc_loss(lp, PADDED, INPUT_LENGTHS, TARGET_LENGTHS, 0, False)
        cpu_grad = torch.ops.aten._ctc_loss_backward(g, lp, PADDED, INPUT_LENGTHS, TARGET_LENGTHS, *cpu, 0, False)
        d = [t.to(DEV) for t in (lp, PADDED, il, tl, g)]
        for lengths in ((INPUT_LENGTHS, TARGET_LENGTHS), (d[2], d[3])):
            nll, alpha = torch.ops.aten._ctc_loss(d[0], d[1], *lengths, 0, False)
            self.assertEqual(alpha.shape, cpu[1].shape)
            self.assertLess(relative_error(cpu[0], nll), 1e-6)
            grad = torch.ops.aten._ctc_loss_backward(d[4], d[0], d[1], *lengths, nll, alpha, 0, False)
            self.assertEqual(grad.device, DEV)
            self.assertLess(relative_error(cpu_grad, grad), 1e-6)
        self.assertEqual(npu.fallback_ops(), {})

    def test_bad_arguments(self):
        x = torch.randn(T, N, C, generator=_gen(4)).log_softmax(2).to(DEV)
        with self.assertRaisesRegex(RuntimeError, "input_lengths to have value at most 12"):
            F.ctc_loss(x, PADDED.to(DEV), [13, 9, 4], TARGET_LENGTHS)
        with self.assertRaisesRegex(RuntimeError, "blank must be in label range"):
            F.ctc_loss(x, PADDED.to(DEV), INPUT_LENGTHS, TARGET_LENGTHS, blank=C)
        # A label out of range is data: a kernel fault, raised at the next synchronisation.
        with self.assertRaisesRegex(RuntimeError, "CTCLossV2.*target 6 of sample 0 is out of bounds"):
            F.ctc_loss(x, torch.tensor([[1, 2, 6, 3], [4, 4, 0, 0], [5, 0, 0, 0]]).to(DEV), INPUT_LENGTHS,
                       TARGET_LENGTHS).item()
        self.assertEqual(npu.fallback_ops(), {})

    def test_float64_falls_back(self):
        self.check(_ctc(PADDED, INPUT_LENGTHS, TARGET_LENGTHS), torch.randn(T, N, C, dtype=torch.float64,
                                                                              generator=_gen(5)))
        self.assertIn("aten::_ctc_loss", npu.fallback_ops())

    def test_conv1d_ctc_training_matches_cpu(self):
        torch.manual_seed(0)
        features, frames, batch, classes = 8, 20, 4, 7
        model = torch.nn.Sequential(torch.nn.Conv1d(features, 16, 3, padding=1), torch.nn.ReLU(),
                                    torch.nn.Conv1d(16, classes, 1))
        x = torch.randn(batch, features, frames, generator=_gen(6))
        targets = torch.randint(1, classes, (batch, 5), generator=_gen(7))
        input_lengths = torch.tensor([20, 18, 15, 20])
        target_lengths = torch.tensor([5, 3, 4, 2])

        def train(device):
            m = copy.deepcopy(model).to(device)
            opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
            losses = []
            for _ in range(4):
                opt.zero_grad()
                log_probs = m(x.to(device)).permute(2, 0, 1).log_softmax(2)
                loss = F.ctc_loss(log_probs, targets.to(device), input_lengths, target_lengths)
                loss.backward()
                opt.step()
                losses.append(loss.item())
            return losses, [p.detach().cpu() for p in m.parameters()]

        cpu_losses, cpu_params = train("cpu")
        dev_losses, dev_params = train(DEV)
        self.assertLess(cpu_losses[-1], cpu_losses[0])
        for a, b in zip(cpu_losses, dev_losses):
            self.assertAlmostEqual(a, b, delta=1e-4 * abs(a))
        for a, b in zip(cpu_params, dev_params):
            self.assertLess(relative_error(a, b), 1e-4)
        self.assertEqual(npu.fallback_ops(), {})


if __name__ == "__main__":
    unittest.main()
