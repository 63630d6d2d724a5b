"""The device itself: placement, copies, views, memory, streams, events, numerics settings."""
import unittest

import torch

import npuscope.torch as npu
from npu_test_util import DEV, run_python


class DeviceTest(unittest.TestCase):
    def test_device_names_and_placement(self):
        self.assertEqual(str(DEV), "privateuseone:0")
        self.assertGreaterEqual(npu.device_count(), 1)
        self.assertTrue(npu.is_available())
        x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        d = x.npu()
        self.assertTrue(d.is_npu)
        self.assertEqual(d.device, DEV)
        self.assertTrue(torch.equal(d.cpu(), x))
        m = torch.nn.Linear(4, 2).npu()
        self.assertEqual(m.weight.device, DEV)

    def test_copies_convert_dtypes_and_broadcast(self):
        x = torch.randn(5, 6)
        for dtype in (torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool, torch.float64):
            self.assertTrue(torch.equal(x.to(DEV).to(dtype).cpu(), x.to(dtype)), dtype)
            self.assertTrue(torch.equal(x.to(dtype).to(DEV).cpu(), x.to(dtype)), dtype)
        d = torch.empty(5, 6, device=DEV)
        d.copy_(torch.tensor(3.0))
        self.assertTrue(torch.equal(d.cpu(), torch.full((5, 6), 3.0)))
        d.copy_(x[0])  # broadcast a row
        self.assertTrue(torch.equal(d.cpu(), x[0].expand(5, 6)))

    def test_views_are_metadata_and_contiguous_copies_are_right(self):
        npu.reset_fallback_ops()
        x = torch.randn(4, 5, 6)
        d = x.to(DEV)
        before = npu.memory_allocated()
        views = [d.transpose(0, 2), d.permute(2, 0, 1), d[:, 1:4, ::2], d[1].t(), d.unsqueeze(0).expand(3, 4, 5, 6),
                 d.view(20, 6), d.reshape(4, 30), d.unfold(2, 3, 2), d.diagonal(0, 1, 2), d.narrow(1, 2, 2)]
        self.assertEqual(npu.memory_allocated(), before)  # no view allocates
        refs = [x.transpose(0, 2), x.permute(2, 0, 1), x[:, 1:4, ::2], x[1].t(), x.unsqueeze(0).expand(3, 4, 5, 6),
                x.view(20, 6), x.reshape(4, 30), x.unfold(2, 3, 2), x.diagonal(0, 1, 2), x.narrow(1, 2, 2)]
        for v, r in zip(views, refs):
            self.assertTrue(torch.equal(v.contiguous().cpu(), r))
            self.assertTrue(torch.equal(v.cpu(), r))
        # Writing through a strided view writes the base tensor.
        d[:, 1:4, ::2] = 7.0
        x[:, 1:4, ::2] = 7.0
        self.assertTrue(torch.equal(d.cpu(), x))
        self.assertEqual(npu.fallback_ops(), {})

    def test_memory_statistics_and_cache(self):
        npu.synchronize()
        npu.empty_cache()
        npu.reset_peak_memory_stats()
        base = npu.memory_allocated()
        t = torch.empty(1024, 1024, device=DEV)  # 4 MiB
        self.assertGreaterEqual(npu.memory_allocated() - base, 4 << 20)
        self.assertGreaterEqual(npu.max_memory_allocated(), npu.memory_allocated())
        self.assertGreaterEqual(npu.memory_reserved(), npu.memory_allocated())
        del t
        npu.synchronize()
        self.assertEqual(npu.memory_allocated(), base)
        self.assertGreaterEqual(npu.max_memory_allocated() - base, 4 << 20)
        npu.empty_cache()
        self.assertLess(npu.memory_reserved(), npu.max_memory_reserved())
        stats = npu.memory_stats()
        self.assertGreater(stats["capacity_bytes"], 0)

    def test_streams_and_events_order_and_time(self):
        s = npu.Stream()
        self.assertNotEqual(s, npu.default_stream())
        a = torch.randn(256, 256, device=DEV)
        start, end = npu.Event(), npu.Event()
        with npu.stream(s):
            self.assertEqual(npu.current_stream(), s)
            start.record()
            b = a @ a
            end.record()
        self.assertEqual(npu.current_stream(), npu.default_stream())
        npu.current_stream().wait_event(end)
        c = b + 1
        s.synchronize()
        self.assertGreater(start.elapsed_time(end), 0.0)  # modelled milliseconds of the matmul
        self.assertTrue(torch.allclose(c.cpu(), a.cpu() @ a.cpu() + 1, rtol=1e-4, atol=1e-4))

    def test_two_devices_train_on_the_second(self):
        p = run_python(
            "import torch, npuscope.torch as npu\n"
            "assert npu.device_count() == 2\n"
            "d1 = npu.device(1)\n"
            "m = torch.nn.Linear(4, 3).to(d1)\n"
            "x = torch.randn(5, 4)\n"
            "loss = m(x.to(d1)).square().sum(); loss.backward()\n"
            "ref = torch.nn.Linear(4, 3); ref.load_state_dict({k: v.cpu() for k, v in m.state_dict().items()})\n"
            "ref(x).square().sum().backward()\n"
            "assert m.weight.grad.device == d1, m.weight.grad.device\n"
            "assert torch.allclose(m.weight.grad.cpu(), ref.weight.grad, rtol=1e-5, atol=1e-6)\n"
            "assert npu.memory_allocated(1) > 0 and npu.memory_allocated(0) == 0\n"
            "npu.set_device(1)\n"
            "assert npu.current_device() == 1 and torch.empty(2, device='privateuseone').device == d1\n"
            "y = torch.ones(3, device='privateuseone:0')\n"
            "print('OK', (y + y.to(d1).to(y.device)).sum().item(), npu.fallback_ops())\n",
            env={"NPUSCOPE_NUM_DEVICES": "2"})
        self.assertIn("OK 6.0 {}", p.stdout)

    def test_precision_and_overflow_modes(self):
        self.assertIn(npu.get_precision_mode(), ("force_fp16", "allow_fp32_to_fp16", "allow_mix_precision",
                                                 "must_keep_origin_dtype"))
        old_mode, old_overflow = npu.get_precision_mode(), npu.get_overflow_mode()
        try:
            npu.set_overflow_mode("saturation")
            npu.clear_float_status()
            x = torch.full((4,), 60000.0, dtype=torch.float16, device=DEV)
            y = (x * 2).cpu()
            self.assertTrue(npu.get_float_status())
            self.assertTrue(torch.equal(y, torch.full((4,), 65504.0, dtype=torch.float16)))
            npu.clear_float_status()
            self.assertFalse(npu.get_float_status())
            npu.set_overflow_mode("inf_nan")
            self.assertTrue(torch.isinf((x * 2).cpu()).all())
            npu.set_precision_mode("force_fp16")
            a = torch.randn(64, 64)
            r = (a.to(DEV) @ a.to(DEV)).cpu()
            self.assertGreater((r - a @ a).abs().max().item(), 1e-5)  # computed in f16
            self.assertLess((r - a @ a).abs().max().item(), 0.5)
            with self.assertRaisesRegex(RuntimeError, "precision mode"):
                npu.set_precision_mode("fast")
        finally:
            npu.set_precision_mode(old_mode)
            npu.set_overflow_mode(old_overflow)


if __name__ == "__main__":
    unittest.main()
