"""The training tools of npuscope.torch under `npuscope run`: dynamic loss scaling (amp.GradScaler, in
both overflow modes), gradient overflow found in the backward pass, and the grad probe finding where
gradients vanish."""
import json
import os
import sqlite3
import unittest

import torch

import npuscope.torch as npu

from script_test_util import CLI, ScriptTestCase, run_command

# A GPT-style decoder (samples/pytorch/gpt.py) trained in force_fp16 with torch's default loss scale,
# 65536: more than f16 holds (65504), so the first op of the backward pass, which starts the gradient
# at the scale (amp._ScaledLoss), overflows; the scaler skips the step and backs off.
GPT_FP16 = """
import sys, torch, npuscope.torch as npu
from gpt import GPT
npu.set_precision_mode("force_fp16")
npu.set_overflow_mode(sys.argv[1])
torch.manual_seed(0)
dev = npu.device()
model = GPT(vocab=64, block=16, dim=32, heads=2, layers=2, dropout=0.0).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randint(0, 64, (2, 16))
x, y = x.to(dev), torch.roll(x, -1, 1).to(dev)
scaler = npu.amp.GradScaler(init_scale=float(sys.argv[2]))
for _ in range(int(sys.argv[3])):
    loss = model(x, y)[1]
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    print("SCALE", scaler.get_scale())
print("RESULT", loss.item(), float(model.head.weight.float().sum().cpu()) if hasattr(model, "head") else 0)
"""

# 12 Linear + Sigmoid layers: the gradients shrink ~4x per layer on their way to the input.
SIGMOID_STACK = """
import torch, npuscope.torch as npu
torch.manual_seed(0)
dev = npu.device()
layers = []
for _ in range(12):
    layers += [torch.nn.Linear(16, 16), torch.nn.Sigmoid()]
model = torch.nn.Sequential(*layers, torch.nn.Linear(16, 1)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 16).to(dev), torch.randn(8, 1).to(dev)
for _ in range(2):
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("RESULT", loss.item(), float(model[0].weight.sum().cpu()))
"""

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "samples", "pytorch")


def samples_env(env=None):
    """`env` with samples/pytorch (gpt.py) on PYTHONPATH."""
    return dict(env or {}, PYTHONPATH=os.environ.get("PYTHONPATH", "") + os.pathsep + SAMPLES)


def run(args, env=None):
    return run_command(args, samples_env(env))


class GradScalerTest(unittest.TestCase):
    """The scaler's arithmetic, without the profiler."""

    def setUp(self):
        self.mode = npu.get_overflow_mode()

    def tearDown(self):
        npu.set_overflow_mode(self.mode)

    def train(self, scaler, steps, value):
        w = torch.nn.Parameter(torch.ones(4).to(npu.device()))
        opt = torch.optim.SGD([w], lr=0.5)
        for _ in range(steps):
            opt.zero_grad()
            scaler.scale((w * value).sum()).backward()
            scaler.step(opt)
            scaler.update()
        return w

    def test_clean_steps_grow_the_scale_and_unscale_the_gradients(self):
        scaler = npu.amp.GradScaler(init_scale=4.0, growth_interval=2)
        w = self.train(scaler, 3, 1.0)
        self.assertEqual(scaler.get_scale(), 8.0)  # doubled after two clean steps
        self.assertTrue(torch.equal(w.detach().cpu(), torch.full((4,), -0.5)))  # 1 - 3 * 0.5 * 1: unscaled

    def test_an_overflow_skips_the_step_and_backs_off(self):
        for mode in ("inf_nan", "saturation"):
            with self.subTest(mode=mode):
                npu.set_overflow_mode(mode)
                npu.set_precision_mode("must_keep_origin_dtype")
                scaler = npu.amp.GradScaler(init_scale=2.0 ** 100)
                w = self.train(scaler, 1, 1e30)  # the scaled gradient is beyond f32
                self.assertEqual(scaler.get_scale(), 2.0 ** 99)
                self.assertTrue(torch.equal(w.detach().cpu(), torch.ones(4)))  # the step was skipped

    def test_disabled_is_plain_training(self):
        scaler = npu.amp.GradScaler(enabled=False)
        w = self.train(scaler, 1, 1.0)
        self.assertEqual(scaler.get_scale(), 1.0)
        self.assertTrue(torch.equal(w.detach().cpu(), torch.full((4,), 0.5)))

    def test_bad_settings_are_refused(self):
        with self.assertRaises(ValueError):
            npu.amp.GradScaler(backoff_factor=2.0)
        scaler = npu.amp.GradScaler()
        w = torch.nn.Parameter(torch.ones(2).to(npu.device()))
        opt = torch.optim.SGD([w], lr=0.1)
        scaler.scale(w.sum()).backward()
        scaler.unscale_(opt)
        with self.assertRaises(RuntimeError):
            scaler.unscale_(opt)


class GradientOverflowTest(ScriptTestCase, script=GPT_FP16, name="gpt_fp16.py"):
    def profile(self, mode, scale, steps):
        db = os.path.join(self.dir.name, "%s_%g.db" % (mode, scale))
        out = run([CLI, "run", "-o", db, "--force", "--", "/usr/bin/python3", self.script, mode, str(scale),
                   str(steps)])
        return db, out

    def test_the_first_overflow_is_in_the_backward_pass_and_skips_are_reported(self):
        for mode in ("inf_nan", "saturation"):
            with self.subTest(mode=mode):
                db, out = self.profile(mode, 2.0 ** 16, 3)
                report = json.loads(run([CLI, "analyze", "--format", "json", db]))
                first = report["overflow_summary"]
                self.assertIsNotNone(first, out)
                self.assertEqual(first["first_pass"], "backward", first)
                self.assertTrue(first["first_op_name"].startswith("backward/"), first)  # the gradient's seed
                skipped = report["skipped_steps"]
                self.assertGreaterEqual(len(skipped), 1, out)
                self.assertEqual(skipped[0]["step"], 0)
                self.assertEqual(skipped[0]["scale"], 2.0 ** 16)
                self.assertEqual(skipped[0]["next_scale"], 2.0 ** 15)
                self.assertEqual(skipped[0]["trigger_pass"], "backward")
                self.assertEqual(skipped[0]["trigger_op"], first["first_op_name"])
                self.assertEqual(report["loss_scale"]["steps"], 3)
                con = sqlite3.connect(db)
                rows = con.execute("SELECT step, scale, next_scale, skipped FROM LOSS_SCALE ORDER BY ts_ns").fetchall()
                self.assertEqual(len(rows), 3)
                self.assertEqual(rows[0], (0, 2.0 ** 16, 2.0 ** 15, 1))
                self.assertEqual(rows[1][3], 0)  # 32768 fits: the next step runs
                # A skipped step still ends the step: one step marker per scaler decision (and the prints' tail).
                steps = [s for (s,) in con.execute("SELECT step FROM MARKER WHERE kind = 1 ORDER BY start_ns")]
                self.assertEqual(steps[:3], [0, 1, 2])
                text = run([CLI, "analyze", db])
                self.assertIn("Steps skipped by the loss scaler", text)

    def test_results_do_not_change_under_the_profiler(self):
        _, profiled = self.profile("inf_nan", 2.0 ** 16, 2)
        plain = run(["/usr/bin/python3", self.script, "inf_nan", str(2.0 ** 16), "2"])
        self.assertEqual([l for l in profiled.splitlines() if l.startswith(("RESULT", "SCALE"))],
                         [l for l in plain.splitlines() if l.startswith(("RESULT", "SCALE"))])


class GradProbeTest(ScriptTestCase, script=SIGMOID_STACK, name="sigmoid.py"):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.db, cls.out = cls.record("probe.db", "--grad-probe", env=samples_env())

    def test_every_parameter_every_step(self):
        con = sqlite3.connect(self.db)
        rows = con.execute("SELECT g.step, s.value, g.numel, g.norm, g.loss_scale FROM GRADIENT g "
                           "JOIN STRING_IDS s ON s.id = g.param_id ORDER BY g.ts_ns").fetchall()
        self.assertEqual(len(rows), 2 * 26)  # 13 Linear layers, weight and bias, two steps
        self.assertEqual({r[0] for r in rows}, {0, 1})
        self.assertEqual(rows[0][1], "24.bias")  # backward order: the output layer first
        self.assertIn(("0.weight", 256), {(r[1], r[2]) for r in rows})
        self.assertTrue(all(r[3] > 0 and r[4] == 1.0 for r in rows))
        # The probe reads what PyTorch computed: the same norm as the gradient left on the parameter.
        norms = {r[1]: r[3] for r in rows if r[0] == 1}
        self.assertGreater(norms["24.weight"], 1000 * norms["0.weight"])

    def test_analyze_finds_where_the_gradients_vanish(self):
        report = json.loads(run([CLI, "analyze", "--format", "json", self.db]))
        issues = [i for i in report["gradient_issues"] if i["issue"] == "vanishing"]
        self.assertEqual(len(issues), 1, report["gradient_issues"])
        self.assertEqual((issues[0]["first_step"], issues[0]["last_step"]), (0, 1))
        start = issues[0]["param"]
        self.assertRegex(start, r"^\d+\.(weight|bias)$")
        layer = int(start.split(".")[0])
        self.assertLess(layer, 24)  # not the output layer: somewhere down the stack
        self.assertLess(issues[0]["vs_step"], 1e-5)
        self.assertIn("Gradient issues (grad probe)", run([CLI, "analyze", self.db]))

    def test_export_writes_the_gradients_csv(self):
        csv_dir = os.path.join(self.dir.name, "csv")
        run([CLI, "export", self.db, "--csv", csv_dir])
        with open(os.path.join(csv_dir, "gradients.csv")) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "Step,Param Name,Numel,Norm,Max,Min,Mean,Zero Ratio,NaN Count,Inf Count,Loss Scale")
        self.assertEqual(len(lines), 1 + 52)
        self.assertTrue(lines[1].startswith("0,24.bias,1,"))

    def test_results_do_not_change_under_the_probe(self):
        plain = run(["/usr/bin/python3", self.script])
        self.assertEqual([l for l in self.out.splitlines() if l.startswith("RESULT")],
                         [l for l in plain.splitlines() if l.startswith("RESULT")])

    def test_without_the_flag_nothing_is_probed(self):
        db = os.path.join(self.dir.name, "plain.db")
        run([CLI, "run", "-o", db, "--", "/usr/bin/python3", self.script])
        self.assertEqual(sqlite3.connect(db).execute("SELECT count(*) FROM GRADIENT").fetchone()[0], 0)


if __name__ == "__main__":
    unittest.main()
