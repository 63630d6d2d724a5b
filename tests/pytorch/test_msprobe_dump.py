"""`npuscope export --msprobe DIR` (docs/pytorch.md): a PyTorch script's dump in msprobe's layout, one
step{S}/rank0/dump.json per step with its API entries (Functional.linear.{n}.forward/backward, ...) and
module entries (Module.{path}.{Class}.forward/backward.{n}, parameters_grad.{n}), each tensor's statistics
and, for a tensor dump, its .npy file. The tensors are checked against what the script itself saw: the
module's input, its output, its weight's gradient."""
import json
import os
import subprocess
import unittest

import numpy as np

from script_test_util import CLI, ScriptTestCase, run_command

# Two linear layers, two SGD steps. The script saves, per step, the model's input, fc1's output (a
# forward hook) and fc1.weight's gradient, as the CPU sees them.
SCRIPT = """
import sys, numpy as np, torch, npuscope.torch as npu
torch.manual_seed(0)
dev = npu.device()
model = torch.nn.Sequential()
model.add_module("fc1", torch.nn.Linear(6, 5))
model.add_module("bn", torch.nn.BatchNorm1d(5))
model.add_module("act", torch.nn.ReLU())
model.add_module("fc2", torch.nn.Linear(5, 3))
model = model.to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
seen = {}
model.fc1.register_forward_hook(lambda m, i, o: seen.__setitem__("fc1_out", o.detach().cpu().numpy()))
saved = {}
for step in range(2):
    x = torch.randn(4, 6)
    y = torch.randint(0, 3, (4,))
    loss = torch.nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
    opt.zero_grad()
    loss.backward()
    saved["x%d" % step] = x.numpy()
    saved["fc1_out%d" % step] = seen["fc1_out"]
    saved["fc1_wgrad%d" % step] = model.fc1.weight.grad.cpu().numpy()
    saved["fc1_weight%d" % step] = model.fc1.weight.detach().cpu().numpy()
    opt.step()
np.savez(sys.argv[1], **saved)
"""


class MsprobeDumpTest(ScriptTestCase, script=SCRIPT, name="train.py"):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        d = cls.dir.name
        cls.expected = {}
        cls.dumps = {}
        env = {"NPUSCOPE_PRECISION_MODE": "must_keep_origin_dtype"}
        for mode in ("tensor", "stats"):
            trace, out, saved = (os.path.join(d, "%s.%s" % (mode, ext)) for ext in ("db", "d", "npz"))
            run_command([CLI, "run", "--dump", mode, "-o", trace, "--", "/usr/bin/python3", cls.script, saved], env)
            cls.export_output = run_command([CLI, "export", trace, "--msprobe", out])
            cls.expected[mode] = np.load(saved)
            cls.dumps[mode] = out

    def dump(self, mode, step):
        base = os.path.join(self.dumps[mode], "step%d" % step, "rank0")
        with open(os.path.join(base, "dump.json")) as f:
            dump = json.load(f)
        with open(os.path.join(base, "construct.json")) as f:
            construct = json.load(f)
        return dump, construct

    def data(self, dump, tensor):
        self.assertIn("data_name", tensor)
        return np.load(os.path.join(dump["dump_data_dir"], tensor["data_name"]))

    def test_layout_and_header(self):
        for step in (0, 1):
            dump, _ = self.dump("tensor", step)
            self.assertEqual(dump["task"], "tensor")
            self.assertEqual(dump["framework"], "pytorch")
            self.assertTrue(os.path.isdir(dump["dump_data_dir"]))
        self.assertIn("API entries", self.export_output)
        stats, _ = self.dump("stats", 0)
        self.assertEqual(stats["task"], "statistics")
        self.assertIsNone(stats["dump_data_dir"])
        for entry in stats["data"].values():
            for tensor in entry.get("input_args", []) + entry.get("output", []):
                self.assertNotIn("data_name", tensor or {})

    def test_module_forward_entry_holds_the_modules_input_output_and_parameters(self):
        for step in (0, 1):
            exp = self.expected["tensor"]
            dump, construct = self.dump("tensor", step)
            fc1 = dump["data"]["Module.fc1.Linear.forward.0"]  # n restarts every step
            self.assertEqual(len(fc1["input_args"]), 1, fc1["input_args"])
            x = fc1["input_args"][0]
            self.assertEqual(x["shape"], [4, 6])
            self.assertEqual(x["dtype"], "torch.float32")
            np.testing.assert_array_equal(self.data(dump, x), exp["x%d" % step])
            self.assertAlmostEqual(x["Max"], float(exp["x%d" % step].max()), places=5)
            self.assertAlmostEqual(x["Norm"], float(np.linalg.norm(exp["x%d" % step].astype(np.float64))), places=4)
            self.assertEqual(len(fc1["output"]), 1)
            np.testing.assert_array_equal(self.data(dump, fc1["output"][0]), exp["fc1_out%d" % step])
            shapes = sorted(p["shape"] for p in fc1["parameters"].values())
            self.assertEqual(shapes, [[5], [5, 6]])
            weight = next(p for p in fc1["parameters"].values() if p["shape"] == [5, 6])
            np.testing.assert_array_equal(self.data(dump, weight), exp["fc1_weight%d" % step])
            self.assertIn(construct["Module.fc1.Linear.forward.0"], (None, "Module.Sequential.forward.0"))

    def test_forward_outputs_are_what_the_call_returned(self):
        # BatchNorm also updates its running statistics in place and saves its batch mean and inverse
        # std for backward: msprobe lists the normalized tensor only.
        dump, _ = self.dump("tensor", 0)
        bn = dump["data"]["Module.bn.BatchNorm1d.forward.0"]
        self.assertEqual([t["shape"] for t in bn["input_args"]], [[4, 5]])
        self.assertEqual([t["shape"] for t in bn["output"]], [[4, 5]])
        self.assertEqual(sorted(p["shape"] for p in bn["parameters"].values()), [[5], [5]])
        np.testing.assert_array_equal(self.data(dump, bn["input_args"][0]), self.expected["tensor"]["fc1_out0"])
        api = dump["data"]["Functional.batch_norm.0.forward"]
        self.assertEqual([t["shape"] for t in api["output"]], [[4, 5]])
        self.assertEqual(api["input_args"][0]["shape"], [4, 5])
        self.assertEqual(api["input_kwargs"], {})

    def test_api_entries_forward_and_backward(self):
        exp = self.expected["tensor"]
        dump, construct = self.dump("tensor", 0)
        linear = dump["data"]["Functional.linear.0.forward"]
        self.assertEqual(construct["Functional.linear.0.forward"], "Module.fc1.Linear.forward.0")
        self.assertEqual(len(linear["input_args"]), 3)  # x, weight, bias: msprobe lists an API's arguments
        np.testing.assert_array_equal(self.data(dump, linear["output"][0]), exp["fc1_out0"])
        # The backward is what the output's autograd node (AddmmBackward0) received and computed: the
        # bias's, the input's and the transposed weight's gradients.
        backward = dump["data"]["Functional.linear.0.backward"]
        self.assertEqual(construct["Functional.linear.0.backward"], "Module.fc1.Linear.backward.0")
        self.assertEqual([t["shape"] for t in backward["input"]], [[4, 5]])
        grads = [self.data(dump, t) for t in backward["output"] if t and t["shape"] == [6, 5]]
        self.assertEqual(len(grads), 1, backward["output"])
        np.testing.assert_allclose(grads[0].T, exp["fc1_wgrad0"], rtol=0, atol=0)
        self.assertIn("Functional.relu.0.forward", dump["data"])
        self.assertIn("Functional.cross_entropy.0.backward", dump["data"])
        self.assertFalse(any(k.startswith("Aten.") for k in dump["data"]), sorted(dump["data"]))

    def test_module_backward_entry_holds_gradients_only(self):
        exp = self.expected["tensor"]
        dump, _ = self.dump("tensor", 0)
        fc1 = dump["data"]["Module.fc1.Linear.backward.0"]
        # Input: the gradient of fc1's output; output: the gradient of its input (x, which needs none).
        self.assertEqual([t["shape"] for t in fc1["input"]], [[4, 5]])
        self.assertEqual(fc1["output"], [])
        grads = dump["data"]["Module.fc1.Linear.parameters_grad.0"]
        self.assertEqual(sorted(grads), ["bias", "weight"])
        np.testing.assert_array_equal(self.data(dump, grads["weight"][0]), exp["fc1_wgrad0"])
        self.assertIn("Module.fc2.Linear.backward.0", dump["data"])

    def test_statistics_dump_matches_tensor_dump(self):
        tensor, _ = self.dump("tensor", 1)
        stats, _ = self.dump("stats", 1)
        self.assertEqual(sorted(tensor["data"]), sorted(stats["data"]))
        a = tensor["data"]["Module.fc2.Linear.forward.0"]["output"][0]
        b = stats["data"]["Module.fc2.Linear.forward.0"]["output"][0]
        for key in ("shape", "dtype", "Max", "Min", "Mean", "Norm"):
            self.assertEqual(a[key], b[key], key)

    def test_trace_without_tensors_is_an_error_that_says_what_to_do(self):
        trace = os.path.join(self.dir.name, "none.db")
        out = os.path.join(self.dir.name, "none_saved.npz")
        run_command([CLI, "run", "-o", trace, "--", "/usr/bin/python3", self.script, out])
        p = subprocess.run([CLI, "export", trace, "--msprobe", os.path.join(self.dir.name, "none.d")],
                           capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("npuscope: error:", p.stderr)
        self.assertIn("--dump stats", p.stderr)


if __name__ == "__main__":
    unittest.main()
