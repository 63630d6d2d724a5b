"""opkit kernels as PyTorch custom ops (samples/opkit/torch_ops.cpp): torch.ops.npuscope_samples.* on
the device against PyTorch's own functions, with Ascend C's verify criterion, and on CPU tensors
through the kernels' goldens."""
import os
import sqlite3
import subprocess
import tempfile
import unittest

import torch
import torch.nn.functional as F

from npu_test_util import DEV, DeviceTestCase

torch.ops.load_library(os.environ["NPUSCOPE_SAMPLE_TORCH_OPS"])
ops = torch.ops.npuscope_samples


def error_ratio(out, ref, rtol=1e-3, atol=1e-5):
    """verify_result.py's share of elements with |out - ref| > atol + rtol |ref|."""
    out, ref = out.detach().double().cpu(), ref.detach().double().cpu()
    bad = ((out - ref).abs() > atol + rtol * ref.abs()).sum().item()
    return bad / max(ref.numel(), 1)


def reference_rms_norm(x, gamma, eps):
    """LLaMA's RMSNorm as Hugging Face writes it: normalised in f32, cast back, times the weight."""
    hs = x.float()
    hs = hs * torch.rsqrt(hs.pow(2).mean(-1, keepdim=True) + eps)
    return (gamma.float() * hs.to(x.dtype).float()).to(x.dtype)


class CustomOps(DeviceTestCase):
    def test_gelu_matches_torch(self):
        torch.manual_seed(0)
        for dtype in (torch.float16, torch.float32):
            for n in (1, 100, 8192 * 3 + 5, 1 << 20):
                x = (torch.randn(n) * 3).to(dtype)
                y = ops.gelu(x.to(DEV))
                self.assertEqual(y.device, DEV)
                self.assertEqual(y.dtype, dtype)
                ref = F.gelu(x.float(), approximate="tanh").to(dtype)
                self.assertLessEqual(error_ratio(y, ref), 1e-3, (dtype, n))

    def test_rms_norm_matches_a_reference(self):
        torch.manual_seed(1)
        for dtype in (torch.float16, torch.float32):
            for shape in ((1, 8), (3, 100), (2, 5, 4096)):
                x = torch.randn(shape).to(dtype)
                gamma = (torch.rand(shape[-1]) + 0.5).to(dtype)
                y = ops.rms_norm(x.to(DEV), gamma.to(DEV), 1e-5)
                self.assertEqual(tuple(y.shape), shape)
                self.assertLessEqual(error_ratio(y, reference_rms_norm(x, gamma, 1e-5)), 1e-3, (dtype, shape))

    def test_add_and_matmul(self):
        torch.manual_seed(2)
        x, y = torch.randn(1000).half(), torch.randn(1000).half()
        self.assertTrue(torch.equal(ops.add(x.to(DEV), y.to(DEV)).cpu(), (x.float() + y.float()).half()))
        a, b = torch.rand(100, 70).half() - 0.5, torch.rand(70, 33).half() - 0.5
        self.assertLessEqual(error_ratio(ops.matmul(a.to(DEV), b.to(DEV)), (a.float() @ b.float()).half()), 1e-3)

    def test_on_cpu_tensors_the_golden_runs(self):
        x = torch.linspace(-4, 4, 257)
        self.assertEqual(ops.gelu(x).device.type, "cpu")
        self.assertLessEqual(error_ratio(ops.gelu(x), F.gelu(x, approximate="tanh")), 0)

    def test_errors_are_python_exceptions(self):
        with self.assertRaisesRegex(RuntimeError, "GeluCustom: takes f16 or f32"):
            ops.gelu(torch.zeros(16, dtype=torch.int32).to(DEV))
        with self.assertRaisesRegex(RuntimeError, "different devices"):
            ops.add(torch.zeros(16).half().to(DEV), torch.zeros(16).half())

    def test_a_profiled_script_shows_the_kernel_as_a_task(self):
        script = ("import os, torch, npuscope.torch as npu\n"
                  "torch.ops.load_library(os.environ['NPUSCOPE_SAMPLE_TORCH_OPS'])\n"
                  "x = torch.randn(1 << 20).half().to(npu.device())\n"
                  "print(torch.ops.npuscope_samples.gelu(x).float().sum().item())\n")
        with tempfile.TemporaryDirectory() as d:
            path, db = os.path.join(d, "gelu.py"), os.path.join(d, "gelu.db")
            with open(path, "w") as f:
                f.write(script)
            # The tiling gives one block per vector core of the device's preset: 48 on the 910B2, 40 on the B3.
            for spec, cores in (("ascend910b", 48), ("ascend910b3", 40)):
                os.path.exists(db) and os.remove(db)
                p = subprocess.run([os.environ.get("NPUSCOPE_CLI", "npuscope"), "run", "-o", db, "--",
                                    "/usr/bin/python3", path], capture_output=True, text=True, timeout=600,
                                   env={**os.environ, "NPUSCOPE_SPEC": spec})
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                con = sqlite3.connect(db)
                rows = con.execute("SELECT t.task_id, t.end_ns - t.start_ns, t.block_dim FROM TASK t JOIN STRING_IDS o "
                                   "ON o.id = t.op_type_id WHERE o.value = 'GeluCustom'").fetchall()
                self.assertEqual(len(rows), 1, spec)
                task_id, duration, block_dim = rows[0]
                self.assertEqual(block_dim, cores, spec)
                self.assertGreater(duration, 1000, spec)  # the kernel's modelled time plus the floor
                # Its blocks and their instructions are in the trace (the viewer's pipe lanes).
                blocks = con.execute("SELECT count(*), max(core) FROM KERNEL_BLOCK WHERE task_id = ?",
                                     (task_id,)).fetchone()
                self.assertEqual(blocks, (cores, cores - 1), spec)
                vector = con.execute("SELECT count(*) FROM PIPE_INSTRUCTION WHERE task_id = ? AND pipe = 1",
                                     (task_id,)).fetchone()[0]
                self.assertGreater(vector, cores, spec)
                con.close()


if __name__ == "__main__":
    unittest.main()
