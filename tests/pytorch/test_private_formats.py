"""A convolution's training step under `npuscope run` on the ascend910b preset: the trace has the
TransData tasks the real 910B profile has around Conv2D and its gradients (NCHW->NC1HWC0,
NCHW->FRACTAL_Z, NC1HWC0->NCHW, FRACTAL_Z->NCHW), the convolution's own task in NC1HWC0/FRACTAL_Z
with storage shapes, and with npuscope.torch.config.allow_internal_format = True fewer conversions;
the results do not change (Note [TransData tasks] in emulator/src/dispatch.cpp)."""
import collections
import sqlite3
import unittest

from script_test_util import ScriptTestCase, run_command

SCRIPT = """
import os, torch, npuscope.torch as npu
torch.manual_seed(0)
npu.config.allow_internal_format = os.environ.get("KEEP_FORMATS") == "1"
assert npu.config.allow_internal_format == (os.environ.get("KEEP_FORMATS") == "1")
dev = npu.device()
m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 8, 3, padding=1),
                        torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(8 * 4 * 4, 10)).to(dev)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
x, y = torch.randn(4, 3, 8, 8).to(dev), torch.randint(0, 10, (4,)).to(dev)
if os.environ.get("INFER") == "1":
    with torch.no_grad():
        for _ in range(3):
            out = m(x)
    print("RESULT %.9f" % out.sum().item())
else:
    for _ in range(2):
        loss = torch.nn.functional.cross_entropy(m(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
    print("RESULT %.9f" % loss.item())
"""


def result(out):
    return [line for line in out.splitlines() if line.startswith("RESULT")]


class PrivateFormatsTest(ScriptTestCase, script=SCRIPT, name="conv_step.py"):
    @classmethod
    def tasks(cls, db):
        con = sqlite3.connect(db)
        s = "(SELECT value FROM STRING_IDS WHERE id = t.%s)"
        rows = con.execute("SELECT %s, %s, %s, %s, %s, %s FROM TASK t ORDER BY t.start_ns, t.task_id" % (
            s % "name_id", s % "op_type_id", s % "input_shapes_id", s % "input_formats_id",
            s % "output_shapes_id", s % "output_formats_id")).fetchall()
        con.close()
        return [(name.rsplit("/", 1)[-1], *rest) for name, *rest in rows]

    def test_conversions_around_the_convolutions(self):
        env = {"NPUSCOPE_SPEC": "ascend910b"}
        db, out = self.record("formats.db", env=env)
        plain = run_command(["/usr/bin/python3", self.script], env)
        self.assertEqual(result(out), result(plain))  # formats are metadata: the same numbers
        tasks = self.tasks(db)
        pairs = collections.Counter((t[3], t[5]) for t in tasks if t[1] == "TransData")
        for pair in (("NCHW", "NC1HWC0"), ("NCHW", "FRACTAL_Z"), ("NC1HWC0", "NCHW"), ("FRACTAL_Z", "NCHW"),
                     ("NCHW", "NC1HWC0:1"), ("NC1HWC0:1", "NCHW")):
            self.assertIn(pair, pairs)
        convs = [t for t in tasks if t[1] == "Conv2d"]
        self.assertEqual(len(convs), 4)  # two per step
        self.assertEqual(convs[0][2:], ("4,1,8,8,8;9,1,16,8;8", "NC1HWC0;FRACTAL_Z;FORMAT_ND", "4,1,8,8,8",
                                        "NC1HWC0"))
        filters = [t for t in tasks if t[1] == "Conv2DBackpropFilter"]
        self.assertEqual(filters[0][4:], ("9,1,16,8", "FRACTAL_Z"))
        self.assertEqual(sum(t[1] == "MemSet" for t in tasks), len(filters))
        # Per step: conv1 x, w, y; conv2 x, w, y; conv2's input gradient w, dy, dx; both filter
        # gradients x, dy, dw: 15 conversions, and the pool's 2 + 2 inside its API.
        self.assertEqual(sum(t[1] == "TransData" for t in tasks), 2 * 19)

        keep_db, keep_out = self.record("keep.db", env=dict(env, KEEP_FORMATS="1"))
        self.assertEqual(result(keep_out), result(plain))
        self.assertEqual(sum(t[1] == "Conv2d" for t in self.tasks(keep_db)), 4)

    def test_allow_internal_format_converts_weights_once(self):
        # Three forward passes: the weights stay in FRACTAL_Z after the first (nothing writes them), and
        # each convolution's output goes back to NCHW once, for the ReLU. (In training the optimizer's
        # ops read the weights and their gradients in NCHW: about as many conversions either way.)
        env = {"NPUSCOPE_SPEC": "ascend910b", "INFER": "1"}
        counts, results = [], []
        for keep in ("0", "1"):
            db, out = self.record("infer%s.db" % keep, env=dict(env, KEEP_FORMATS=keep))
            tasks = self.tasks(db)
            counts.append(collections.Counter((t[3], t[5]) for t in tasks if t[1] == "TransData"))
            results.append(result(out))
        self.assertEqual(results[0], results[1])
        self.assertEqual(counts[0][("NCHW", "FRACTAL_Z")], 6)  # 2 weights x 3 passes
        self.assertEqual(counts[1][("NCHW", "FRACTAL_Z")], 2)  # once each
        self.assertLess(sum(counts[1].values()), sum(counts[0].values()))

    def test_tiny_spec_has_none(self):
        db, _ = self.record("tiny.db", env={"NPUSCOPE_SPEC": "tiny"})
        self.assertEqual(sum(t[1] == "TransData" for t in self.tasks(db)), 0)


if __name__ == "__main__":
    unittest.main()
