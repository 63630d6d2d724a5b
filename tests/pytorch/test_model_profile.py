"""A PyTorch training script under `npuscope run`, as the profiler sees it (Note [PyTorch observers]):
aten ops and module calls as host ranges (PYTORCH_API) linked to the device tasks they launched, tasks
named after module and aten op in the pass they ran in, input shapes on every task, steps from
optimizer.step() or npuscope.torch.step(), and the analyzer's steps, passes, modules and aten ops."""
import json
import os
import sqlite3
import unittest

import perfetto_trace_util
from script_test_util import CLI, ScriptTestCase, run_command

# A ResNet-18 (torchvision's) on small images: three SGD steps, then one more forward in eval.
RESNET = """
import sys, torch, torchvision, npuscope.torch as npu
torch.manual_seed(0)
dev = npu.device()
model = torchvision.models.resnet18(num_classes=10).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x, y = torch.randn(2, 3, 32, 32).to(dev), torch.randint(0, 10, (2,)).to(dev)
for _ in range(3):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("OBSERVING", npu.observing(), "STEP", npu.current_step())
print("RESULT", loss.item(), float(model.fc.weight.sum().cpu()))
"""

# Steps the script marks itself: two per optimizer step here, so the boundaries cannot be the optimizer's.
MANUAL_STEPS = """
import torch, npuscope.torch as npu
dev = npu.device()
m = torch.nn.Linear(4, 4).to(dev)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for i in range(4):
    m(torch.ones(2, 4).to(dev)).sum().backward()
    if i % 2:
        opt.step()
    npu.step()
"""


def run(args, env=None):
    return run_command(args, env)


def result_lines(out):
    return [l for l in out.splitlines() if l.startswith("RESULT")]


class ModelProfileTest(ScriptTestCase, script=RESNET, name="resnet.py"):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.db, cls.profiled = cls.record("resnet.db")
        cls.con = sqlite3.connect(cls.db)

    @classmethod
    def tearDownClass(cls):
        cls.con.close()
        super().tearDownClass()

    def query(self, sql, *args):
        return self.con.execute(sql, args).fetchall()

    def task_names(self, db=None):
        con = sqlite3.connect(db) if db else self.con
        return con.execute("SELECT s.value, t.call_index FROM TASK t JOIN STRING_IDS s ON s.id = t.name_id "
                           "ORDER BY t.task_id").fetchall()

    def test_results_do_not_change_under_the_profiler(self):
        plain = run(["/usr/bin/python3", self.script])
        self.assertEqual(result_lines(self.profiled), result_lines(plain))
        for dump in ("stats", "tensor"):  # every dump mode: the dumps read the tensors, never write them
            db = os.path.join(self.dir.name, "dump_%s.db" % dump)
            out = run([CLI, "run", "-o", db, "--dump", dump, "--", "/usr/bin/python3", self.script])
            self.assertEqual(result_lines(out), result_lines(plain), dump)
        self.assertIn("OBSERVING True STEP 3", self.profiled)
        self.assertIn("OBSERVING False", plain)

    def test_aten_ops_and_modules_are_host_ranges(self):
        rows = self.query("SELECT s.value, p.kind, p.pass, m.value, sh.value, p.sequence_number FROM PYTORCH_API p "
                          "JOIN STRING_IDS s ON s.id = p.name_id LEFT JOIN STRING_IDS m ON m.id = p.module_id "
                          "LEFT JOIN STRING_IDS sh ON sh.id = p.input_shapes_id")
        names = {r[0] for r in rows}
        for name in ("Module.ResNet.forward.0", "Module.layer1.0.conv1.Conv2d.forward.0",
                     "Module.layer1.0.BasicBlock.forward.0", "Module.layer4.1.conv2.Conv2d.forward.0",
                     "Module.fc.Linear.forward.0", "aten::convolution", "aten::addmm", "Optimizer.step#SGD.step",
                     "Optimizer.zero_grad#SGD.zero_grad"):
            self.assertIn(name, names)
        # BasicBlock calls its relu twice: two calls of one module, numbered.
        self.assertIn("Module.layer1.0.relu.ReLU.forward.1", names)
        convs = [r for r in rows if r[0] == "aten::conv2d" and r[3] == "Module.conv1.Conv2d.forward.0"]
        self.assertEqual(len(convs), 3)  # one per step: the calls are numbered per step
        self.assertEqual(convs[0][1], 0)  # aten op
        self.assertEqual(convs[0][2], 0)  # forward
        self.assertTrue(convs[0][4].startswith("2,3,32,32;64,3,7,7;"), convs[0][4])
        self.assertGreaterEqual(convs[0][5], 0)  # autograd's sequence number
        backward = [r for r in rows if r[1] == 1 and r[3] == "Module.layer1.0.conv1.Conv2d.backward.0"]
        self.assertTrue(backward, "the conv's backward function runs in its module's backward entry")
        self.assertTrue(all(r[2] == 1 for r in backward))
        optimizer = [r for r in rows if r[0] == "Optimizer.step#SGD.step"]
        self.assertEqual([(r[1], r[2]) for r in optimizer], [(3, 2)] * 3)

    def test_host_ranges_nest_in_time(self):
        # Every op lies within its parent, on the caller's thread and on the autograd engine's (whose clock
        # takes over the caller's time: Note [Hand-offs between host threads]).
        bad = self.query("SELECT count(*) FROM PYTORCH_API c JOIN PYTORCH_API p ON p.id = c.parent_id "
                         "WHERE c.start_ns < p.start_ns OR c.end_ns > p.end_ns OR c.end_ns < c.start_ns")
        self.assertEqual(bad, [(0,)])
        engine = self.query("SELECT DISTINCT p.kind, p.pass FROM PYTORCH_API p JOIN STRING_IDS s ON s.id = p.name_id "
                            "WHERE s.value LIKE 'autograd::engine::evaluate_function:%'")
        self.assertEqual(engine, [(1, 1)])  # the engine's own range around each node: a backward function

    def test_tasks_are_named_after_module_and_aten_op_and_linked_to_them(self):
        names = {n for n, _ in self.task_names()}
        self.assertIn("Module.layer1.0.conv1.Conv2d.forward.0/aten::convolution", names)
        self.assertIn("Module.layer1.0.conv1.Conv2d.backward.0/aten::convolution_backward", names)
        self.assertIn("Module.fc.Linear.forward.0/aten::addmm", names)
        self.assertTrue(any(n.startswith("backward/") for n in names), "the loss's backward, outside any module")
        self.assertTrue(any(n.startswith("Optimizer.step#SGD.step/") for n in names))
        # Each kernel task points at the aten op that launched it, and carries its input shapes.
        rows = self.query("SELECT s.value, op.value, sh.value, dt.value FROM TASK t "
                          "JOIN STRING_IDS s ON s.id = t.name_id JOIN PYTORCH_API p ON p.id = t.pytorch_api_id "
                          "JOIN STRING_IDS op ON op.id = p.name_id JOIN STRING_IDS sh ON sh.id = t.input_shapes_id "
                          "JOIN STRING_IDS dt ON dt.id = t.input_dtypes_id "
                          "WHERE s.value = 'Module.layer1.0.conv1.Conv2d.forward.0/aten::convolution'")
        self.assertEqual(len(rows), 3)
        self.assertEqual(rows[0][1], "aten::convolution_overrideable")
        # no bias; the conv's own task shows its private formats' storage shapes (Note [Private formats]):
        # x NC1HWC0 [2, 64/8, 8, 8, 8], w FRACTAL_Z [64/8*3*3, 64/16, 16, 8] (f32: C0 = 8)
        self.assertEqual(rows[0][2], "2,8,8,8,8;72,4,16,8;")
        self.assertEqual(rows[0][3], "f32;f32;")
        unlinked = self.query("SELECT count(*) FROM TASK WHERE pytorch_api_id = 0 AND task_type IN (0, 1, 2)")[0][0]
        self.assertEqual(unlinked, 0)

    def test_names_are_stable_between_runs(self):
        db = os.path.join(self.dir.name, "again.db")
        run([CLI, "run", "-o", db, "--", "/usr/bin/python3", self.script])
        self.assertEqual(self.task_names(db), self.task_names())

    def test_optimizer_steps_are_step_boundaries(self):
        # Three training steps, and the work after the last optimizer step (the prints' reads) in a fourth.
        steps = self.query("SELECT step FROM MARKER WHERE kind = 1 ORDER BY start_ns")
        self.assertEqual(steps, [(0,), (1,), (2,), (3,)])
        self.assertEqual(self.query("SELECT value FROM META WHERE key = 'stat.unpaired_markers'"), [("0",)])

    def test_dumps_follow_the_steps(self):
        db = os.path.join(self.dir.name, "step1.db")
        run([CLI, "run", "-o", db, "--dump", "stats", "--steps", "1", "--ops", "*conv1.Conv2d.forward*", "--",
             "/usr/bin/python3", self.script])
        con = sqlite3.connect(db)
        dumped = con.execute("SELECT DISTINCT s.value, t.call_index FROM TENSOR x JOIN TASK t ON t.task_id = x.task_id "
                             "JOIN STRING_IDS s ON s.id = t.name_id").fetchall()
        self.assertTrue(dumped)
        for name, call in dumped:
            self.assertIn("conv1.Conv2d.forward", name)
            self.assertEqual(call, 1)  # the second step's call

    def test_analyze_shows_steps_passes_modules_and_aten_ops(self):
        report = json.loads(run([CLI, "analyze", "--format", "json", "--top", "200", self.db]))
        tables = report
        steps = tables["steps"]
        self.assertEqual([s["step"] for s in steps], [0, 1, 2, 3])
        self.assertTrue(all(s["forward_ns"] > 0 and s["backward_ns"] > 0 and s["optimizer_ns"] > 0
                            for s in steps[:3]))
        self.assertEqual((steps[3]["backward_ns"], steps[3]["optimizer_ns"]), (0, 0))
        passes = {p["pass"]: p for p in tables["passes"]}
        self.assertEqual(set(passes), {"forward", "backward", "optimizer"})
        self.assertTrue(all(p["device_ns"] > 0 for p in passes.values()))
        self.assertAlmostEqual(sum(p["ratio_pct"] for p in passes.values()), 100.0, places=6)
        modules = {m["module"]: m for m in tables["top_modules"]}
        self.assertIn("layer1.0.conv1.Conv2d", modules)
        self.assertGreater(modules["layer1.0.conv1.Conv2d"]["backward_ns"], 0)
        aten = {(a["aten_op"], a["pass"]) for a in tables["aten_ops"]}
        self.assertIn(("aten::convolution_overrideable", "forward"), aten)
        text = run([CLI, "analyze", self.db])
        for heading in ("Steps", "Time by pass (PyTorch)", "Top modules (PyTorch, self time)",
                        "Aten op statistics (PyTorch)"):
            self.assertIn(heading, text)

    def test_diff_compares_one_training_step_with_another(self):
        """npuscope diff of step 1 against step 2 of the same run: every op pairs with its call of the other step
        by name (call indexes counted from each step's first call). Step 0 against step 1: SGD's momentum
        buffers and zero_grad's fills appear in step 1 (the first step has no gradients to zero)."""
        out = os.path.join(self.dir.name, "diff.json")
        run([CLI, "diff", self.db, self.db, "--base-step", "1", "--new-step", "2", "--format", "json", "-o", out])
        with open(out) as f:
            d = json.load(f)
        m = d["diff_matching"]
        self.assertGreater(m["base_ops"], 100)
        self.assertEqual((m["new_ops"], m["by_name"], m["added"], m["removed"]), (m["base_ops"],) * 2 + (0, 0))
        self.assertIn("framework", {r["source"] for r in d["diff_apis"]})  # the aten ops' host time
        run([CLI, "diff", self.db, self.db, "--base-step", "0", "--new-step", "1", "--format", "json", "-o", out])
        with open(out) as f:
            d = json.load(f)
        added = {r["op"] for r in d["diff_ops"] if r["match"] == "added"}
        self.assertTrue(any(op.startswith("Optimizer.zero_grad") for op in added), added)

    def test_the_viewer_draws_pytorch_lanes_and_details(self):
        viewer = os.path.join(os.path.dirname(CLI), "..", "viewer", "npuscope-viewer")
        shot, stats = os.path.join(self.dir.name, "view.png"), os.path.join(self.dir.name, "view.json")
        # -f: xvfb-run's own authority directory can fail to go at exit, and it then exits 5
        # (tests/cli_test_util.h, xvfb_run_prefix).
        run(["xvfb-run", "-a", "-n", str(400 + os.getpid() % 500), "-f", os.path.join(self.dir.name, "xauth"),
             viewer, self.db, "--select",
             "Module.layer1.0.conv1.Conv2d.forward.0/aten::convolution", "--panel", "details", "--size", "1400x900",
             "--screenshot", shot, "--frame-stats", stats])
        with open(stats) as f:
            frame = json.load(f)
        pytorch = [l for l in frame["lanes"] if l["kind"] == "pytorch"]
        self.assertTrue(pytorch, [l["kind"] for l in frame["lanes"]])
        self.assertGreater(sum(l["items"] for l in pytorch), 0)
        self.assertGreater(frame["selected_task"], 0)
        self.assertGreater(os.path.getsize(shot), 10000)

    def test_chrome_export_has_the_pytorch_ops(self):
        out = os.path.join(self.dir.name, "t.json")
        printed = run([CLI, "export", self.db, "--chrome", out])
        self.assertIn("PyTorch ops and module calls", printed)
        with open(out) as f:
            events = json.load(f)["traceEvents"]
        modules = [e for e in events if e.get("cat") == "module"]
        self.assertIn("Module.layer1.0.conv1.Conv2d.forward.0", {e["name"] for e in modules})
        convs = [e for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::conv2d"]
        self.assertTrue(convs)
        self.assertEqual(convs[0]["args"]["pass"], "forward")
        self.assertTrue(convs[0]["args"]["input_shapes"].startswith("2,3,32,32;"))

    def test_perfetto_export_of_the_run(self):
        # The recorded trace as Perfetto reads it: every task, API call and PyTorch op a slice at its row's
        # times, modules holding their ops, a flow from each op to every task it launched, the memory counters.
        out = os.path.join(self.dir.name, "t.pftrace")
        printed = run([CLI, "export", self.db, "--perfetto", out])
        self.assertIn("PyTorch ops and module calls, with flows to the", printed)
        d = perfetto_trace_util.decode(out)
        self.assertEqual(d.problems, [])
        by_category = {}
        for s in d.slices:
            by_category.setdefault(s["category"], []).append(s)
        tasks = {s["args"]["task_id"]: s for s in by_category["task"]}
        # A copy in TASK (task type 3, MEMCPY) and in MEMCPY is one slice, the MEMCPY row's.
        rows = self.query("SELECT task_id, start_ns, end_ns - start_ns, pytorch_api_id FROM TASK t WHERE NOT EXISTS "
                          "(SELECT 1 FROM MEMCPY c WHERE t.task_type = 3 AND t.connection_id != 0 AND "
                          "c.connection_id = t.connection_id)")
        self.assertEqual(len(tasks), len(rows))
        for task_id, start, dur, _ in rows:
            self.assertEqual((tasks[task_id]["ts"], tasks[task_id]["dur"]), (start, dur), task_id)
        ops = {s["args"]["id"]: s for c in ("cpu_op", "module", "backward", "optimizer") for s in by_category.get(c, [])}
        op_rows = self.query("SELECT id, start_ns, end_ns - start_ns FROM PYTORCH_API")
        self.assertEqual(len(ops), len(op_rows))
        for op_id, start, dur in op_rows:
            self.assertEqual((ops[op_id]["ts"], ops[op_id]["dur"]), (start, dur), op_id)
        self.assertEqual(len(by_category["api"]), self.query("SELECT count(*) FROM API")[0][0])
        # Modules hold their ops: a conv of layer1 lies below its module on the thread's track.
        conv = next(s for s in by_category["cpu_op"] if s["name"] == "aten::conv2d"
                    and s["args"].get("module") == "Module.layer1.0.conv1.Conv2d.forward.0")
        self.assertGreater(conv["depth"], 0)
        self.assertEqual(conv["args"]["pass"], "forward")
        self.assertIn(conv["args"]["step"], (0, 1, 2))  # the optimizer's steps
        self.assertTrue(d.path(conv["track"]).startswith("host/thread "), d.path(conv["track"]))
        # Each op's flows end at exactly the tasks that name it.
        ends = {}
        for s in d.slices:
            for flow in s["flows"]:
                if flow >> 63:
                    ends.setdefault(flow, []).append(s)
        launched = {(task_id, op) for task_id, _, _, op in rows if op}
        self.assertGreater(len(launched), 100)
        joined = set()
        for flow, pair in ends.items():
            self.assertEqual(len(pair), 2, flow)
            op, task = sorted(pair, key=lambda s: s["category"] == "task")
            self.assertEqual(task["category"], "task")
            self.assertEqual(task["args"]["pytorch_op_id"], op["args"]["id"])
            self.assertLessEqual(op["ts"], task["ts"])
            joined.add((task["args"]["task_id"], op["args"]["id"]))
        self.assertEqual(joined, launched)
        memory = [d.tracks[u]["name"] for u in d.counters]
        self.assertEqual(sorted(memory), ["memory allocated", "memory reserved"])
        self.assertEqual(sum(len(v) for v in d.counters.values()),
                         2 * self.query("SELECT count(*) FROM MEMORY_RECORD")[0][0])

    def test_manual_steps_replace_the_optimizers(self):
        script = os.path.join(self.dir.name, "manual.py")
        with open(script, "w") as f:
            f.write(MANUAL_STEPS)
        db = os.path.join(self.dir.name, "manual.db")
        run([CLI, "run", "-o", db, "--", "/usr/bin/python3", script])
        con = sqlite3.connect(db)
        self.assertEqual(con.execute("SELECT step FROM MARKER WHERE kind = 1 ORDER BY start_ns").fetchall(),
                         [(0,), (1,), (2,), (3,)])

    def test_observers_can_be_left_out(self):
        db = os.path.join(self.dir.name, "plain.db")
        run([CLI, "run", "-o", db, "--", "/usr/bin/python3", self.script], env={"NPUSCOPE_TORCH_OBSERVE": "0"})
        con = sqlite3.connect(db)
        self.assertEqual(con.execute("SELECT count(*) FROM PYTORCH_API").fetchone()[0], 0)
        names = {n for (n,) in con.execute("SELECT s.value FROM TASK t JOIN STRING_IDS s ON s.id = t.name_id")}
        self.assertIn("aten::convolution", names)


if __name__ == "__main__":
    unittest.main()
