"""`npuscope run --check-ops` (msprobe's API accuracy checker, online): every NPU kernel re-run on its CPU
golden in f64 with the same inputs, judged by msprobe's API precision standards. A clean float32 run
passes; a planted error (a perturbation) is caught, with its worst element; the script's results do
not change."""
import json
import os
import sqlite3
import unittest

from script_test_util import CLI, ScriptTestCase, run_command

MLP = """
import torch, npuscope.torch as npu
npu.set_precision_mode("must_keep_origin_dtype")
torch.manual_seed(0)
dev = npu.device()
class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = torch.nn.Linear(32, 64), torch.nn.Linear(64, 64), torch.nn.Linear(64, 10)
    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))
model = MLP().to(dev)
# A learning rate exact in float32: p - lr * buf cancels where p ~ lr * buf, and there the kernel's
# float32 lr and the golden's float64 one differ by more than msprobe's float32 rtol (2^-20).
opt = torch.optim.SGD(model.parameters(), lr=0.125, momentum=0.5)
x, y = torch.randn(16, 32).to(dev), torch.randint(0, 10, (16,)).to(dev)
for _ in range(2):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("RESULT", loss.item(), float(model.fc1.weight.sum().cpu()))
"""


def run(args, env=None):
    return run_command(args, env)


class CheckOpsTest(ScriptTestCase, script=MLP, name="mlp.py"):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.db, cls.out = cls.record("checked.db", "--check-ops")

    def test_a_clean_float32_run_passes(self):
        con = sqlite3.connect(self.db)
        checked, tasks = con.execute("SELECT count(*), count(DISTINCT task_id) FROM OP_CHECK").fetchone()
        kernels = con.execute("SELECT count(*) FROM TASK WHERE task_type IN (0, 1)").fetchone()[0]
        self.assertGreater(tasks, kernels // 2)  # the NPU kernels (AI CPU fallbacks are CPU kernels already)
        standards = {s for (s,) in con.execute("SELECT DISTINCT standard FROM OP_CHECK")}
        self.assertTrue({0, 1, 2, 4} <= standards, standards)  # binary, absolute threshold, ULP, benchmark
        failing = con.execute("SELECT s.value, c.standard, c.failing_ratio, c.max_rel_err FROM OP_CHECK c "
                              "JOIN TASK t ON t.task_id = c.task_id JOIN STRING_IDS s ON s.id = t.name_id "
                              "WHERE c.status != 0").fetchall()
        self.assertEqual(failing, [])
        report = json.loads(run([CLI, "analyze", "--format", "json", self.db]))
        self.assertEqual(report["op_check"]["errors"], 0)
        self.assertEqual(report["op_check"]["outputs"], checked)
        self.assertEqual(report["op_check_failures"], [])
        # NPU kernels the check could not judge are counted, not dropped silently.
        unchecked = con.execute("SELECT count(*) FROM TASK WHERE task_type IN (0, 1) AND device_id >= 0 AND "
                                "fallback = 0 AND task_id NOT IN (SELECT task_id FROM OP_CHECK)").fetchone()[0]
        self.assertEqual(report["op_check"]["unchecked_tasks"], unchecked)
        self.assertEqual(report["op_check"]["unchecked_op_types"] is None, unchecked == 0)

    def test_results_do_not_change_under_the_check(self):
        plain = run(["/usr/bin/python3", self.script])
        self.assertEqual([l for l in self.out.splitlines() if l.startswith("RESULT")],
                         [l for l in plain.splitlines() if l.startswith("RESULT")])

    def test_a_planted_error_in_a_pytorch_op_is_caught(self):
        db = os.path.join(self.dir.name, "planted_torch.db")
        run([CLI, "run", "-o", db, "--check-ops", "--", "/usr/bin/python3", self.script],
            env={"NPUSCOPE_PERTURB": "Module.fc2.Linear.forward.0/*:noise=0.05"})
        report = json.loads(run([CLI, "analyze", "--format", "json", db]))
        failures = report["op_check_failures"]
        self.assertEqual({f["op_name"] for f in failures}, {"Module.fc2.Linear.forward.0/aten::addmm"}, failures)
        self.assertEqual((failures[0]["status"], failures[0]["pass"]), ("error", "forward"))
        self.assertEqual(failures[0]["failing_calls"], 2)  # both steps' calls

    def test_a_planted_error_is_caught_with_its_worst_element(self):
        model = os.path.join(os.path.dirname(CLI), "..", "samples", "models", "mlp.onnx")
        db = os.path.join(self.dir.name, "planted.db")
        run([CLI, "run", "-o", db, "--check-ops", "--", CLI, "exec", "--model", model, "--precision-mode",
             "must_keep_origin_dtype", "--perturb", "block4.matmul:noise=0.05",
             "--output-dir", os.path.join(self.dir.name, "exec_mlp")])
        report = json.loads(run([CLI, "analyze", "--format", "json", db]))
        failures = report["op_check_failures"]
        self.assertGreaterEqual(len(failures), 1, report["op_check"])
        self.assertEqual(failures[0]["op_name"], "block4.matmul")
        self.assertEqual(failures[0]["status"], "error")
        self.assertEqual(failures[0]["standard"], "ulp")
        self.assertGreater(failures[0]["failing_ratio"], 0.5)
        worst = failures[0]
        self.assertNotEqual(worst["npu_value"], worst["golden_value"])
        self.assertEqual({f["op_name"] for f in failures}, {"block4.matmul"})  # the ops after it got its outputs
        text = run([CLI, "analyze", db])
        self.assertIn("Ops failing the online check", text)
        self.assertIn("block4.matmul", text)


# A convolution's weight gradient: the format plan launches a MemSet before Conv2DBackpropFilter
# (the kernel accumulates into its output), a task with no operands that the check must leave
# unchecked rather than re-run (it crashed the script).
CNN = """
import torch, npuscope.torch as npu
torch.manual_seed(0)
dev = npu.device()
model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(8 * 8 * 8, 4)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.125)
x, y = torch.randn(2, 3, 8, 8).to(dev), torch.randint(0, 4, (2,)).to(dev)
loss = torch.nn.functional.cross_entropy(model(x), y)
opt.zero_grad()
loss.backward()
opt.step()
print("RESULT", loss.item())
"""


class CheckOpsOfAConvolutionTest(ScriptTestCase, script=CNN, name="cnn.py"):
    def test_tasks_without_operands_are_left_unchecked(self):
        db, out = self.record("cnn.db", "--check-ops")
        self.assertIn("RESULT", out)
        con = sqlite3.connect(db)
        memsets = con.execute("SELECT task_id FROM TASK t JOIN STRING_IDS s ON s.id = t.op_type_id "
                              "WHERE s.value = 'MemSet'").fetchall()
        self.assertGreater(len(memsets), 0, "no MemSet before the weight gradient: the test checks nothing")
        self.assertEqual(con.execute("SELECT count(*) FROM OP_CHECK WHERE task_id IN (SELECT t.task_id FROM TASK t "
                                     "JOIN STRING_IDS s ON s.id = t.op_type_id WHERE s.value = 'MemSet')")
                         .fetchone()[0], 0)
        checked = con.execute("SELECT count(DISTINCT c.task_id) FROM OP_CHECK c JOIN TASK t ON t.task_id = c.task_id "
                              "JOIN STRING_IDS s ON s.id = t.op_type_id WHERE s.value = 'Conv2DBackpropFilter'")
        self.assertEqual(checked.fetchone()[0], 1)


if __name__ == "__main__":
    unittest.main()
