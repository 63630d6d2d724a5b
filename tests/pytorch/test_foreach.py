"""The foreach ops on the device against CPU PyTorch: every overload the optimizers call (add, mul, div with a
list, a scalar or a scalar per tensor; sqrt; addcmul and addcdiv), SGD(momentum, weight_decay, foreach=True)
training as CPU SGD does, with one ForeachAddList / ForeachMulScalar task per list as the real 910B profile
shows (3 + 1 a step), and Adam, AdamW, RMSprop and Adagrad with foreach=True as their CPU loops, all with no
CPU fallback."""
import copy
import os
import sqlite3
import subprocess
import tempfile
import unittest

import torch

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase

CLI = os.environ.get("NPUSCOPE_CLI", "npuscope")

SGD_SCRIPT = """
import torch, npuscope.torch as npu
torch.manual_seed(0)
dev = npu.device()
m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).to(dev)
opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4, foreach=True)
x, y = torch.randn(8, 16).to(dev), torch.randint(0, 4, (8,)).to(dev)
for step in range(3):  # each optimizer.step() ends a step (MARKER kind 1)
    loss = torch.nn.functional.cross_entropy(m(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
print("RESULT %.9f" % loss.item())
"""


def lists(seed, dtype=torch.float32):
    torch.manual_seed(seed)
    return [torch.randn(3, 5, dtype=dtype), torch.randn(7, dtype=dtype), torch.randn(2, 2, 2, dtype=dtype)]


class ForeachTest(DeviceTestCase):
    def assert_lists_close(self, dev, cpu, tol=1e-6):
        self.assertEqual(len(dev), len(cpu))
        for d, c in zip(dev, cpu):
            self.assertEqual(d.device, DEV)
            self.assertEqual(d.shape, c.shape)
            self.assertTrue(torch.allclose(d.cpu(), c, rtol=tol, atol=tol), (d.cpu(), c))

    def test_functional_and_in_place_match_cpu(self):
        a, b = lists(1), lists(2)
        da, db = [t.to(DEV) for t in a], [t.to(DEV) for t in b]
        self.assert_lists_close(torch._foreach_add(da, db, alpha=-0.5), torch._foreach_add(a, b, alpha=-0.5))
        self.assert_lists_close(torch._foreach_mul(da, 0.9), torch._foreach_mul(a, 0.9))
        torch._foreach_mul_(da, 0.9)
        torch._foreach_mul_(a, 0.9)
        torch._foreach_add_(da, db, alpha=2.0)
        torch._foreach_add_(a, b, alpha=2.0)
        self.assert_lists_close(da, a)
        self.assertEqual(npu.fallback_ops(), {})

    def test_every_overload_the_optimizers_call(self):
        a, b, c = lists(3), lists(4), [t.abs() + 0.5 for t in lists(5)]
        d = [[t.to(DEV) for t in x] for x in (a, b, c)]
        scalars = [0.5, -2.0, 3.0]
        for name, fn in (
                ("mul.List", lambda x, y, z: torch._foreach_mul(x, y)),
                ("div.List", lambda x, y, z: torch._foreach_div(x, z)),
                ("add.Scalar", lambda x, y, z: torch._foreach_add(x, 1e-8)),
                ("div.Scalar", lambda x, y, z: torch._foreach_div(x, 3.0)),
                ("add.ScalarList", lambda x, y, z: torch._foreach_add(x, scalars)),
                ("mul.ScalarList", lambda x, y, z: torch._foreach_mul(x, scalars)),
                ("div.ScalarList", lambda x, y, z: torch._foreach_div(x, scalars)),
                ("sqrt", lambda x, y, z: torch._foreach_sqrt(z)),
                ("addcmul.Scalar", lambda x, y, z: torch._foreach_addcmul(x, y, y, 0.001)),
                ("addcmul.ScalarList", lambda x, y, z: torch._foreach_addcmul(x, y, z, scalars)),
                ("addcdiv.Scalar", lambda x, y, z: torch._foreach_addcdiv(x, y, z, -0.01)),
                ("addcdiv.ScalarList", lambda x, y, z: torch._foreach_addcdiv(x, y, z, scalars))):
            with self.subTest(overload=name):
                self.assert_lists_close(fn(*d), fn(a, b, c))
        # The in-place overloads write into their first list.
        for name, fn in (("mul_.List", lambda x, y, z: torch._foreach_mul_(x, y)),
                         ("div_.ScalarList", lambda x, y, z: torch._foreach_div_(x, scalars)),
                         ("add_.Scalar", lambda x, y, z: torch._foreach_add_(x, 0.25)),
                         ("sqrt_", lambda x, y, z: torch._foreach_sqrt_(z)),
                         ("addcmul_.Scalar", lambda x, y, z: torch._foreach_addcmul_(x, y, y, 0.1)),
                         ("addcdiv_.ScalarList", lambda x, y, z: torch._foreach_addcdiv_(x, y, z, scalars))):
            with self.subTest(overload=name):
                fn(*d)
                fn(a, b, c)
                self.assert_lists_close(d[0], a, tol=1e-5)
                self.assert_lists_close(d[2], c, tol=1e-5)
        self.assertEqual(npu.fallback_ops(), {})

    def test_adaptive_optimizers_with_foreach_match_cpu(self):
        for make in (lambda p: torch.optim.Adam(p, lr=1e-2, weight_decay=1e-4, foreach=True),
                     lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=1e-2, foreach=True),
                     lambda p: torch.optim.RMSprop(p, lr=1e-3, momentum=0.5, foreach=True),
                     lambda p: torch.optim.Adagrad(p, lr=1e-2, foreach=True)):
            torch.manual_seed(0)
            model = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
            dev_model = copy.deepcopy(model).to(DEV)
            opt, dev_opt = make(model.parameters()), make(dev_model.parameters())
            with self.subTest(optimizer=type(opt).__name__):
                npu.reset_fallback_ops()
                for _ in range(4):
                    x, y = torch.randn(8, 12), torch.randint(0, 3, (8,))
                    for m, o, xs, ys in ((model, opt, x, y), (dev_model, dev_opt, x.to(DEV), y.to(DEV))):
                        loss = torch.nn.functional.cross_entropy(m(xs), ys)
                        o.zero_grad()
                        loss.backward()
                        o.step()
                for p, q in zip(model.parameters(), dev_model.parameters()):
                    self.assertLess((p - q.detach().cpu()).abs().max().item(), 1e-5)
                self.assertEqual(npu.fallback_ops(), {})

    def test_non_contiguous_and_mixed_dtypes(self):
        base = torch.randn(6, 4)
        a, b = [base.t(), torch.randn(5)], [torch.randn(4, 6), torch.randn(5)]
        da, db = [base.to(DEV).t(), a[1].to(DEV)], [t.to(DEV) for t in b]  # da[0] is not contiguous
        torch._foreach_add_(da, db, alpha=0.5)
        torch._foreach_add_(a, b, alpha=0.5)
        self.assert_lists_close(da, a)
        # A list of integer tensors is not the native path: the CPU fallback computes it.
        ints = [torch.arange(4).to(DEV)]
        torch._foreach_mul_(ints, 3)
        self.assertEqual(ints[0].cpu().tolist(), [0, 3, 6, 9])
        self.assertIn("aten::_foreach_mul_", npu.fallback_ops())

    def test_sgd_foreach_matches_cpu_sgd(self):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                    torch.nn.Linear(8 * 6 * 6, 10))
        dev_model = copy.deepcopy(model).to(DEV)
        batches = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))) for _ in range(4)]
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4, foreach=False)
        dev_opt = torch.optim.SGD(dev_model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4, foreach=True)
        for x, y in batches:
            for m, o, xs, ys in ((model, opt, x, y), (dev_model, dev_opt, x.to(DEV), y.to(DEV))):
                loss = torch.nn.functional.cross_entropy(m(xs), ys)
                o.zero_grad()
                loss.backward()
                o.step()
        for (name, p), q in zip(model.named_parameters(), dev_model.parameters()):
            self.assertLess((p - q.detach().cpu()).abs().max().item(), 1e-5, name)
        self.assertEqual(npu.fallback_ops(), {}, "SGD(foreach=True) runs no op through the CPU fallback")


class ForeachProfileTest(unittest.TestCase):
    def test_sgd_step_launches_one_task_per_list(self):
        with tempfile.TemporaryDirectory() as d:
            script, db = os.path.join(d, "sgd.py"), os.path.join(d, "t.db")
            with open(script, "w") as f:
                f.write(SGD_SCRIPT)
            p = subprocess.run([CLI, "run", "-o", db, "--", "/usr/bin/python3", script], capture_output=True, text=True,
                               timeout=600)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            con = sqlite3.connect(db)
            steps = con.execute("SELECT step, start_ns, end_ns FROM MARKER WHERE kind = 1 ORDER BY start_ns").fetchall()
            self.assertGreaterEqual(len(steps), 3)
            rows = con.execute("SELECT o.value, t.queued_ns, t.fallback FROM TASK t "
                               "JOIN STRING_IDS o ON o.id = t.op_type_id ORDER BY t.task_id").fetchall()
            self.assertTrue(all(fallback == 0 for _, _, fallback in rows))
            per_step = [[op for op, queued, _ in rows if start <= queued < end and op.startswith("Foreach")]
                         for _, start, end in steps]
            per_step = [ops for ops in per_step if ops]
            # Step 1 makes the momentum buffers (clone): weight decay and the update only. Then the
            # whole foreach path: weight decay, buffers * momentum, buffers + grads, the update.
            self.assertEqual(len(per_step), 3, per_step)
            self.assertEqual(per_step[0], ["ForeachAddList"] * 2)
            for ops in per_step[1:]:
                self.assertEqual(ops, ["ForeachAddList", "ForeachMulScalar", "ForeachAddList", "ForeachAddList"])


if __name__ == "__main__":
    unittest.main()
