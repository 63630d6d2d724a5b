"""`npuscope compare -- /usr/bin/python3 script.py` (docs/compare.md): a training script recorded as a golden
run (NPUSCOPE_GOLDEN=1: every device op on its CPU golden kernel) and as an NPU run, compared op by op; a
perturbation planted in one module's backward (or forward) is found there, with its pass."""
import json
import os
import subprocess
import unittest

from script_test_util import ScriptTestCase

CLI = os.environ.get("NPUSCOPE_CLI", "npuscope")

# A 3-layer MLP with dropout (the device's Bernoulli: the same mask in both runs), two SGD steps, float32.
SCRIPT = """
import torch, npuscope.torch as npu
torch.manual_seed(0)
dev = npu.device()

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.drop = torch.nn.Dropout(0.25)
        self.fc2 = torch.nn.Linear(32, 32)
        self.fc3 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(self.drop(torch.relu(self.fc1(x))))))

model = Net().to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(8, 16).to(dev), torch.randint(0, 4, (8,)).to(dev)
for _ in range(2):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("RESULT", loss.item())
"""


class CompareScriptTest(ScriptTestCase, script=SCRIPT, name="train.py"):
    def compare(self, *flags):
        """Runs npuscope compare FLAGS --format json -- python script; returns (JSON, stderr)."""
        out = os.path.join(self.dir.name, "compare.json")
        env = dict(os.environ, NPUSCOPE_PRECISION_MODE="must_keep_origin_dtype")
        p = subprocess.run([CLI, "compare", *flags, "--format", "json", "-o", out, "--", "/usr/bin/python3",
                            self.script], capture_output=True, text=True, timeout=900, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(out) as f:
            return json.load(f), p.stderr

    def later_rows(self, result, op):
        """The output rows of the ops that ran after `op` (the first introducing op)."""
        rows = [r for r in result["rows"] if r["tensor"].startswith("output")]
        return [r for r in rows if r["task_id"] > op["task_id"]]

    def test_clean_script_has_no_failing_op(self):
        result, _ = self.compare()
        self.assertEqual(result["summary"]["mode"], "tensor")
        self.assertIsNone(result["first_failing_op"], result["first_failing_op"])
        self.assertEqual(result["summary"]["failed"], 0)
        self.assertEqual(result["summary"]["unmatched_npu"], 0)
        self.assertEqual(result["summary"]["unmatched_golden"], 0)
        self.assertGreater(result["summary"]["ops_compared"], 40)
        passes = {r["pass"] for r in result["rows"]}
        self.assertTrue({"forward", "backward", "optimizer"} <= passes, passes)
        names = {r["op_name"] for r in result["rows"]}
        self.assertIn("Module.fc2.Linear.forward.0/aten::addmm", names)
        self.assertIn("Module.fc2.Linear.backward.0/aten::mm", names)
        # dropout (its mask and DropoutDoMask, forward and backward) matched
        self.assertIn("Module.drop.Dropout.forward.0/aten::native_dropout", names)
        self.assertIn("Module.drop.Dropout.backward.0/aten::native_dropout_backward", names)
        # The autograd engine's own ops (the sum reducing a bias's gradient to its shape, inside the engine's
        # range around a node, after the node) are backward too, in the node's module.
        sums = {r["pass"] for r in result["rows"] if r["op_name"].endswith("aten::sum")}
        self.assertEqual(sums, {"backward"})
        self.assertIn("Module.fc2.Linear.backward.0/aten::sum", names)
        self.assertNotIn("backward/aten::sum", names)

    def test_backward_perturbation_is_found_in_the_backward_pass(self):
        result, _ = self.compare("--perturb", "Module.fc2.Linear.backward.0/*:noise=0.5")
        op = result["first_introducing_op"]
        self.assertIsNotNone(op, result["notes"])
        self.assertTrue(op["op_name"].startswith("Module.fc2.Linear.backward.0/aten::"), op)
        self.assertEqual(op["pass"], "backward")
        self.assertEqual(result["first_failing_op"]["op_name"], op["op_name"])
        later = self.later_rows(result, op)
        inherited = [r for r in later if r["verdict"] == "fail" and r["origin"] == "inherited"]
        self.assertTrue(any(r["op_name"].startswith("Module.fc1.Linear.backward.0/") for r in inherited), inherited)
        self.assertTrue(all(r["pass"] == "backward" for r in inherited), inherited)
        earlier = [r for r in result["rows"] if r["task_id"] < op["task_id"] and r["tensor"].startswith("output")]
        self.assertTrue(earlier and all(r["verdict"] == "pass" for r in earlier),
                        [r for r in earlier if r["verdict"] != "pass"])

    def test_forward_perturbation_is_found_as_a_forward_op(self):
        result, _ = self.compare("--perturb", "Module.fc1.Linear.forward.0/*:noise=0.5")
        op = result["first_introducing_op"]
        self.assertIsNotNone(op, result["notes"])
        self.assertEqual(op["op_name"], "Module.fc1.Linear.forward.0/aten::addmm")
        self.assertEqual(op["pass"], "forward")
        self.assertEqual(op["call_index"], 0)
        later = self.later_rows(result, op)
        self.assertTrue(any(r["verdict"] == "fail" and r["origin"] == "inherited" and r["pass"] == "backward"
                            for r in later))

    def test_steps_and_ops_filters_narrow_what_is_compared(self):
        result, _ = self.compare("--steps", "1", "--ops", "Module.fc*")
        names = {(r["op_name"], r["call_index"]) for r in result["rows"]}
        # 3 Linear forwards; in backward 5 mm and the 3 sums reducing the biases' gradients
        self.assertEqual(result["summary"]["ops_compared"], 11, names)
        self.assertTrue(all(n.startswith("Module.fc") for n, _ in names), names)
        self.assertIn(("Module.fc1.Linear.forward.0/aten::addmm", 1), names)  # the second step's call
        self.assertEqual(result["summary"]["failed"], 0)
        self.assertTrue(any("were not compared" in n for n in result["notes"]), result["notes"])

    def test_text_report_says_the_pass(self):
        out = os.path.join(self.dir.name, "compare.txt")
        env = dict(os.environ, NPUSCOPE_PRECISION_MODE="must_keep_origin_dtype")
        p = subprocess.run([CLI, "compare", "--perturb", "Module.fc3.Linear.backward.0/*:bitflip", "-o", out, "--",
                            "/usr/bin/python3", self.script], capture_output=True, text=True, timeout=900, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(out) as f:
            report = " ".join(f.read().split())  # the report wraps long lines
        self.assertRegex(report, r"first op that introduced the error: Module\.fc3\.Linear\.backward\.0/aten::\w+ "
                                 r"\(\w+, call \d+, task \d+, backward pass\)")

    def test_perturb_environment_errors_and_warnings(self):
        """NPUSCOPE_PERTURB for a plain run: a bad rule stops the script with the rule's error, a rule that
        matched nothing is a warning at exit, and the script's results are the unperturbed ones."""
        def script(rules):
            env = dict(os.environ, NPUSCOPE_PERTURB=rules)
            return subprocess.run(["/usr/bin/python3", self.script], capture_output=True, text=True, timeout=600,
                                  env=env)
        bad = script("Module.fc1.Linear.forward.0/*:wobble")
        self.assertNotEqual(bad.returncode, 0)
        message = "NPUSCOPE_PERTURB line 1: perturbation 'Module.fc1.Linear.forward.0/*:wobble': unknown mode 'wobble'"
        self.assertIn("npuscope: error: " + message, bad.stderr)
        self.assertIn("RuntimeError: privateuseone: " + message, bad.stderr)  # the exception says it too
        unmatched = script("Module.fc9.*:noise=0.5")
        self.assertEqual(unmatched.returncode, 0, unmatched.stderr)
        self.assertIn("npuscope: warning: perturbation 'Module.fc9.*:noise=0.5' matched no op", unmatched.stderr)
        clean = script("")
        self.assertEqual([l for l in unmatched.stdout.splitlines() if l.startswith("RESULT")],
                         [l for l in clean.stdout.splitlines() if l.startswith("RESULT")])


if __name__ == "__main__":
    unittest.main()
