"""A PyTorch script under `npuscope run`: its device tasks are the aten ops, with durations and memory,
the fallback is listed by `npuscope analyze`, and the script's results do not change."""
import os
import sqlite3
import subprocess
import tempfile
import unittest

CLI = os.environ.get("NPUSCOPE_CLI", "npuscope")

SCRIPT = """
import torch, npuscope.torch as npu
torch.manual_seed(0)
dev = npu.device()
m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.Flatten(),
                        torch.nn.Linear(8 * 14 * 14, 10)).to(dev)
opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
x, y = torch.randn(4, 3, 16, 16).to(dev), torch.randint(0, 10, (4,)).to(dev)
for _ in range(3):
    loss = torch.nn.functional.cross_entropy(m(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
c = torch.lgamma(x.abs() + 1)  # no native kernel: the CPU fallback
print("RESULT %.9f %.9f" % (loss.item(), c.sum().item()))
"""


class ProfileTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.script = os.path.join(self.dir.name, "train.py")
        with open(self.script, "w") as f:
            f.write(SCRIPT)

    def tearDown(self):
        self.dir.cleanup()

    def run_cmd(self, args):
        p = subprocess.run(args, capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p.stdout

    def test_trace_has_aten_ops_memory_and_the_fallback(self):
        db = os.path.join(self.dir.name, "t.db")
        out = self.run_cmd([CLI, "run", "-o", db, "--", "/usr/bin/python3", self.script])
        plain = self.run_cmd(["/usr/bin/python3", self.script])
        self.assertEqual([l for l in out.splitlines() if l.startswith("RESULT")],
                         [l for l in plain.splitlines() if l.startswith("RESULT")])  # profiling changes nothing
        con = sqlite3.connect(db)
        tasks = con.execute("SELECT s.value, o.value, t.end_ns - t.start_ns, t.fallback FROM TASK t "
                            "JOIN STRING_IDS s ON s.id = t.name_id JOIN STRING_IDS o ON o.id = t.op_type_id").fetchall()
        # Tasks are named "{module call}/{aten op}" (test_model_profile.py): the aten op is the last part.
        tasks = [(name.rsplit("/", 1)[-1], op_type, duration, fallback) for name, op_type, duration, fallback in tasks]
        names = {name for name, _, _, _ in tasks}
        for op in ("aten::convolution", "aten::convolution_backward", "aten::native_batch_norm",
                   "aten::native_batch_norm_backward", "aten::addmm", "aten::nll_loss_forward",
                   "aten::threshold_backward", "aten::add", "aten::lgamma"):
            self.assertIn(op, names)
        self.assertTrue(all(duration > 0 for _, _, duration, _ in tasks))
        by_name = {name: (op_type, fallback) for name, op_type, _, fallback in tasks}
        self.assertEqual(by_name["aten::convolution"], ("Conv2d", 0))
        self.assertEqual(by_name["aten::lgamma"][1], 1)  # an AI CPU fallback task
        self.assertEqual(len([t for t in tasks if t[0] == "aten::convolution"]), 3)  # one per step
        allocs = con.execute("SELECT count(*), max(allocated_bytes) FROM MEMORY_RECORD").fetchone()
        self.assertGreater(allocs[0], 10)
        self.assertGreater(allocs[1], 4 * 3 * 16 * 16 * 4)
        copies = con.execute("SELECT count(*) FROM MEMCPY").fetchone()[0]
        self.assertGreater(copies, 3)  # the inputs went up, the loss came down
        report = self.run_cmd([CLI, "analyze", db])
        self.assertIn("AI CPU ops and fallbacks", report)
        self.assertRegex(report, r"aten::lgamma\s+yes\s+1")


if __name__ == "__main__":
    unittest.main()
