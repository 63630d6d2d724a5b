"""Bad use of the device raises a Python exception a user can act on; it never crashes."""
import unittest

import torch

import npuscope.torch as npu
from npu_test_util import DEV, run_python


class ErrorTest(unittest.TestCase):
    def test_out_of_memory_names_the_bytes(self):
        p = run_python(
            "import torch, npuscope.torch as npu\n"
            "npu.set_spec('tiny')\n"
            "cap = npu.memory_stats()['capacity_bytes']\n"
            "keep = torch.empty(cap // 8, dtype=torch.float32, device=npu.device())\n"
            "try:\n"
            "    torch.empty(cap // 4 * 3, dtype=torch.uint8, device=npu.device())\n"
            "except RuntimeError as e:\n"
            "    print('CAUGHT', e)\n"
            "x = torch.ones(10, device=npu.device())\n"
            "print('STILL', x.sum().item())\n")
        self.assertIn("CAUGHT", p.stdout)
        self.assertRegex(p.stdout, r"out of memory on npu:0: tried to allocate .*allocated.*reserved.*free")
        self.assertIn("STILL 10.0", p.stdout)

    def test_tensors_on_two_devices(self):
        p = run_python(
            "import torch, npuscope.torch as npu\n"
            "a = torch.ones(4, device='privateuseone:0'); b = torch.ones(4, device='privateuseone:1')\n"
            "for f in (lambda: a + b, lambda: a @ b, lambda: torch.cat([a, b])):\n"
            "    try:\n"
            "        f(); print('NO ERROR')\n"
            "    except RuntimeError as e:\n"
            "        print('CAUGHT', str(e).splitlines()[0])\n"
            "print('COPY', (a + b.to(a.device)).sum().item())\n",
            env={"NPUSCOPE_NUM_DEVICES": "2"})
        self.assertNotIn("NO ERROR", p.stdout)
        self.assertEqual(p.stdout.count("CAUGHT"), 3, p.stdout)
        self.assertIn("device", p.stdout)
        self.assertIn("COPY 8.0", p.stdout)

    def test_cpu_and_device_tensors_in_one_op(self):
        a = torch.ones(3, 4, device=DEV)
        with self.assertRaisesRegex(RuntimeError, "device"):
            a + torch.ones(3, 4)
        logits = torch.randn(4, 10, device=DEV)
        with self.assertRaisesRegex(RuntimeError, "target"):
            torch.nn.functional.cross_entropy(logits, torch.zeros(4, dtype=torch.long))

    def test_unsupported_dtype(self):
        with self.assertRaisesRegex(RuntimeError, "ComplexFloat.*CPU"):
            torch.randn(3, dtype=torch.complex64).to(DEV)
        with self.assertRaisesRegex(RuntimeError, "Short"):
            torch.empty(3, dtype=torch.int16, device=DEV)

    def test_device_index_out_of_range(self):
        with self.assertRaisesRegex(RuntimeError, "privateuseone:7 does not exist"):
            torch.empty(3, device="privateuseone:7")
        with self.assertRaisesRegex(RuntimeError, "does not exist"):
            npu.set_device(7)
        with self.assertRaisesRegex(RuntimeError, "does not exist"):
            torch.ones(2).to("privateuseone:9")

    def test_bad_shapes_and_indices(self):
        with self.assertRaisesRegex(RuntimeError, "cannot be multiplied"):
            torch.randn(3, 4, device=DEV) @ torch.randn(5, 6, device=DEV)
        emb = torch.nn.Embedding(10, 4).to(DEV)
        with self.assertRaisesRegex(RuntimeError, "Gather|index"):
            emb(torch.tensor([3, 12]).to(DEV)).cpu()
        self.assertEqual(emb(torch.tensor([3, 4]).to(DEV)).cpu().shape, (2, 4))  # the device still works

    def test_set_spec_after_tensors_exist(self):
        keep = torch.ones(4, device=DEV)
        with self.assertRaisesRegex(RuntimeError, "before the first tensor"):
            npu.set_spec("tiny")
        del keep


if __name__ == "__main__":
    unittest.main()
