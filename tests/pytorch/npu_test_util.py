"""Shared by the PyTorch device tests: the device, a CPU-vs-device check of one function's forward and
backward, and running a script in a fresh interpreter (for settings that must come first). Running
npuscope itself: script_test_util.py."""
import os
import subprocess

import unittest

import torch

import npuscope.torch as npu

DEV = npu.device()


class DeviceTestCase(unittest.TestCase):
    """Runs each test in must_keep_origin_dtype (float32 computes in float32, as on the CPU) with the
    fallback counts cleared, and restores the precision mode after."""

    def setUp(self):
        self.mode = npu.get_precision_mode()
        npu.set_precision_mode("must_keep_origin_dtype")
        npu.reset_fallback_ops()

    def tearDown(self):
        npu.set_precision_mode(self.mode)

    def check(self, fn, *inputs, tol=1e-6):
        """fn on the device matches fn on the CPU within `tol` (relative_error), its output and the gradients of
        its floating inputs."""
        y_cpu, g_cpu = forward_backward(fn, *inputs)
        y_dev, g_dev = forward_backward(fn, *[x.to(DEV) for x in inputs])
        self.assertEqual(y_dev.device, DEV)
        self.assertEqual(y_dev.shape, y_cpu.shape)
        self.assertLess(relative_error(y_cpu, y_dev), tol)
        self.assertEqual(len(g_cpu), len(g_dev))
        for a, b in zip(g_cpu, g_dev):
            self.assertLess(relative_error(a, b), tol)


def relative_error(a, b):
    a, b = a.detach().double().cpu(), b.detach().double().cpu()
    return (a - b).abs().max().item() / max(a.abs().max().item(), 1e-30)


def forward_backward(fn, *inputs):
    """fn's output and the gradients of its inputs, for `inputs` on their own device."""
    xs = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in inputs]
    y = fn(*xs)
    torch.manual_seed(1)
    g = torch.randn(y.shape, dtype=y.dtype).to(y.device)
    y.backward(g)
    return y, [x.grad for x in xs if x.is_floating_point()]


def run_python(code, env=None, check=True):
    """Runs `code` in /usr/bin/python3 with this test's PYTHONPATH; returns the CompletedProcess."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    p = subprocess.run(["/usr/bin/python3", "-c", code], env=full_env, capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError("script failed (%d):\n%s\n%s" % (p.returncode, p.stdout, p.stderr))
    return p
