"""Dropout as torch_npu runs it (Note [Dropout as torch_npu runs it] in pytorch/src/kernels_dropout.cpp): a mask
drawn on the device and DropoutDoMask forward and backward, with PyTorch's autograd through native_dropout."""
import os
import sqlite3
import subprocess
import tempfile
import unittest

import torch
import torch.nn.functional as F

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase

CLI = os.environ.get("NPUSCOPE_CLI", "npuscope")

SCRIPT = """
import torch, torch.nn.functional as F, npuscope.torch as npu
x = torch.randn(64, 128).to(npu.device()).requires_grad_()
F.dropout(x, 0.5, training=True).sum().backward()
print(float(x.grad.abs().sum()))
"""


class DropoutTest(DeviceTestCase):
    def test_gradient_is_the_mask_times_the_scale(self):
        torch.manual_seed(1)
        x = torch.randn(3000).to(DEV).requires_grad_()
        y = F.dropout(x, 0.3, training=True)
        self.assertEqual(type(y.grad_fn).__name__, "NativeDropoutBackward0")
        g = torch.randn(3000)
        y.backward(g.to(DEV))
        kept = (y.detach().cpu() != 0)
        self.assertTrue(0.65 < kept.float().mean().item() < 0.75)
        self.assertTrue(torch.allclose(y.detach().cpu(), x.detach().cpu() * kept / 0.7, rtol=1e-6))
        self.assertTrue(torch.allclose(x.grad.cpu(), g * kept / 0.7, rtol=1e-6))
        self.assertEqual(npu.fallback_ops(), {})

    def test_eval_edges_and_half_follow_pytorch(self):
        x = torch.randn(5, 7).to(DEV)
        self.assertTrue(torch.equal(F.dropout(x, 0.5, training=False).cpu(), x.cpu()))
        self.assertTrue(torch.equal(F.dropout(x, 0.0, training=True).cpu(), x.cpu()))
        self.assertTrue(torch.equal(F.dropout(x, 1.0, training=True).cpu(), torch.zeros(5, 7)))
        h = F.dropout(torch.ones(256, device=DEV, dtype=torch.float16), 0.5, training=True)
        self.assertEqual(h.dtype, torch.float16)
        self.assertTrue(set(h.cpu().float().unique().tolist()) <= {0.0, 2.0})
        self.assertEqual(npu.fallback_ops(), {})


class DropoutTasksTest(unittest.TestCase):
    def test_forward_draws_a_mask_and_applies_it_and_backward_applies_it_again(self):
        with tempfile.TemporaryDirectory() as d:
            script, db = os.path.join(d, "dropout.py"), os.path.join(d, "t.db")
            with open(script, "w") as f:
                f.write(SCRIPT)
            p = subprocess.run([CLI, "run", "-o", db, "--", "/usr/bin/python3", script], capture_output=True,
                               text=True, timeout=600)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            ops = [op for (op,) in sqlite3.connect(db).execute(
                "SELECT o.value FROM TASK t JOIN STRING_IDS o ON o.id = t.op_type_id ORDER BY t.task_id")]
            dropout = [op for op in ops if op in ("Bernoulli", "DropoutDoMask", "Mul", "Muls", "Div")]
            self.assertEqual(dropout, ["Bernoulli", "DropoutDoMask", "DropoutDoMask"], ops)


if __name__ == "__main__":
    unittest.main()
