"""msprobe's names in npuscope's own dumps (docs/compare.md "msprobe names in npuscope's dumps"): a small
training script run under `npuscope run --dump stats` on the emulated NPU and exported with --msprobe pairs
entry by entry with the same script's CPU run dumped in msprobe's layout by msprobe_cpu_dump.py: the same
entry names (Functional.conv2d.0.forward, Tensor.add_.0.forward, Torch.matmul.0.backward,
Module.fc.Linear.parameters_grad.0, ...), the same value slots, dtypes and shapes, close statistics. An
LSTM's torch._VF call (VF.lstm.0.forward) and the forward calls activation checkpointing recomputes in the
backward pass ("is_recompute": true) likewise."""
import json
import math
import os
import re
import sys
import unittest

from script_test_util import CLI, ScriptTestCase, run_command

# Both scripts: on the CPU under msprobe_cpu_dump.py (dumped to argv[2]), or on the emulated NPU.
PREAMBLE = """
import sys, torch
import torch.utils.checkpoint
torch.manual_seed(0)
on_cpu = sys.argv[1] == "cpu"
if on_cpu:
    import msprobe_cpu_dump as dumper
    dumper.start()
    dev = torch.device("cpu")
else:
    import npuscope.torch as npu
    dev = npu.device()
"""

SCRIPT = PREAMBLE + """

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.relu = torch.nn.ReLU()
        self.fc = torch.nn.Linear(64, 5)
        self.proj = torch.nn.Parameter(torch.eye(5) * 0.5)

    def forward(self, x):
        y = self.relu(self.bn(self.conv(x))).flatten(1)
        z = self.fc(y)
        w = torch.matmul(z, self.proj)
        w.add_(z)
        return w


model = Net().to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    x = torch.randn(2, 3, 4, 4)
    y = torch.tensor([1, 3])
    loss = torch.nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if on_cpu:
        dumper.step()
if on_cpu:
    dumper.write(sys.argv[2])
"""

# nn.LSTM calls torch._VF.lstm (VF.lstm.{n}.forward); the block is checkpointed, so its forward runs again
# in the backward pass (is_recompute).
RECURRENT_SCRIPT = PREAMBLE + """

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 6)

    def forward(self, x):
        return torch.tanh(self.fc(x))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(4, 6, batch_first=True)
        self.block = Block()
        self.head = torch.nn.Linear(6, 3)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(torch.utils.checkpoint.checkpoint(self.block, y.sum(1)))


model = Net().to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(2, 5, 4)
loss = model(x.to(dev)).square().mean()
loss.backward()
opt.step()
if on_cpu:
    dumper.write(sys.argv[2])
"""


def flatten(record, name):
    """msprobe compare's rows of one entry: {slot: leaf}, slots as its compare names them."""
    rows = {}

    def walk(v, slot, index_lists=True):
        if v is None:
            rows[slot] = None
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, "%s.%d" % (slot, i) if index_lists else slot, index_lists)
        elif isinstance(v, dict) and isinstance(v.get("type"), str):
            rows[slot] = v
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, "%s.%s" % (slot, k) if slot else k, index_lists)

    if ".parameters_grad." in name:
        for param, grads in record.items():
            walk(grads, param, index_lists=False)
        return rows
    for key, value in record.items():
        section = {"input_args": "input", "input_kwargs": "input"}.get(key, key)
        if section in ("input", "output", "parameters"):
            walk(value, section)
    return rows


def record_runs(cls, dump="stats"):
    """cls.script run twice: on the CPU, dumped in msprobe's layout (msprobe_cpu_dump.py) into cls.cpu, and on the
    emulated NPU under `npuscope run --dump DUMP` into the trace cls.trace (test_msprobe_view.py's too)."""
    d = cls.dir.name
    cls.cpu = os.path.join(d, "cpu")
    env = {"PYTHONPATH": os.pathsep.join([os.path.dirname(os.path.abspath(__file__)),
                                          os.environ.get("PYTHONPATH", "")])}
    if dump == "md5":
        env["MSPROBE_SUMMARY_MODE"] = "md5"
    run_command(["/usr/bin/python3", cls.script, "cpu", cls.cpu], env)
    cls.trace = os.path.join(d, "npu.db")
    env["NPUSCOPE_PRECISION_MODE"] = "must_keep_origin_dtype"
    run_command([CLI, "run", "--dump", dump, "-o", cls.trace, "--", "/usr/bin/python3", cls.script, "npu"], env)


class DumpedTwice(ScriptTestCase):
    """The script run on the CPU (msprobe_cpu_dump.py's dump in cls.cpu) and under `npuscope run --dump stats`
    (cls.dump) on the emulated NPU (the trace cls.trace, exported with --msprobe to cls.npu)."""
    dump = "stats"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        record_runs(cls, cls.dump)
        cls.npu = os.path.join(cls.dir.name, "npu")
        cls.export_output = run_command([CLI, "export", cls.trace, "--msprobe", cls.npu])

    def load(self, root, step, name="dump.json"):
        with open(os.path.join(root, "step%d" % step, "rank0", name)) as f:
            return json.load(f)

    def check_every_entry_pairs(self, steps):
        for step in steps:
            npu, cpu = self.load(self.npu, step)["data"], self.load(self.cpu, step)["data"]
            self.assertEqual(sorted(npu), sorted(cpu), "step %d" % step)
            for name in cpu:
                a, b = flatten(npu[name], name), flatten(cpu[name], name)
                self.assertEqual(sorted(a), sorted(b), name)
                for slot in b:
                    if b[slot] is None or a[slot] is None:
                        self.assertEqual(a[slot], b[slot], "%s %s" % (name, slot))
                        continue
                    for key in ("type", "dtype", "shape", "value"):
                        self.assertEqual(a[slot].get(key), b[slot].get(key), "%s %s %s" % (name, slot, key))

    def check_statistics(self, names, step=0):
        npu, cpu = self.load(self.npu, step)["data"], self.load(self.cpu, step)["data"]
        for name in names:
            a, b = flatten(npu[name], name), flatten(cpu[name], name)
            for slot, want in b.items():
                if not want or want.get("type") != "torch.Tensor" or want["Max"] is None:
                    continue
                got = a[slot]
                self.assertIsNotNone(got["Max"], "%s %s has no statistics" % (name, slot))
                for key in ("Max", "Min", "Mean", "Norm"):
                    self.assertTrue(math.isclose(got[key], want[key], rel_tol=1e-3, abs_tol=1e-4),
                                    "%s %s %s: %r != %r" % (name, slot, key, got[key], want[key]))

    def check_compare(self, steps, mode="statistics"):
        # npuscope compare takes the trace itself: its dump is rebuilt under msprobe's names, step by
        # step, and pairs every entry of the CPU's msprobe-layout dump.
        out = os.path.join(self.dir.name, "compare.json")
        run_command([CLI, "compare", self.trace, self.cpu, "--format", "json", "-o", out])
        with open(out) as f:
            report = json.load(f)
        # Several steps report as {"comparisons": [...], "unpaired": [...]}, one step as its report.
        comparisons = report.get("comparisons", [{"step": steps[0], "report": report}])
        self.assertEqual(report.get("unpaired", []), [])
        self.assertEqual([c["step"] for c in comparisons], list(steps))
        for c in comparisons:
            summary = c["report"]["dump_summary"]
            self.assertEqual(summary["mode"], mode)
            self.assertEqual((summary["unmatched_npu"], summary["unmatched_bench"]), (0, 0), c["step"])
            self.assertEqual(summary["entries_compared"], len(self.load(self.cpu, c["step"])["data"]))
            if mode == "md5":  # the same bits or not: most results differ in their last bits
                continue
            self.assertGreater(summary["passed"], summary["entries_compared"] // 2)
            self.assertIsNone(summary["first_failing"] if summary["first_failing"] != "none" else None)


class MsprobeNamesTest(DumpedTwice, script=SCRIPT, name="train.py"):
    def test_every_entry_pairs(self):
        self.check_every_entry_pairs((0, 1))

    def test_names_are_msprobes(self):
        data = self.load(self.npu, 0)["data"]
        for name in ("Functional.conv2d.0.forward", "Functional.conv2d.0.backward", "Functional.batch_norm.0.forward",
                     "Functional.relu.0.forward", "Functional.linear.0.forward", "Functional.linear.0.backward",
                     "Torch.matmul.0.forward", "Torch.matmul.0.backward", "Tensor.add_.0.forward",
                     "Functional.cross_entropy.0.forward", "Functional.cross_entropy.0.backward",
                     "Module.conv.Conv2d.forward.0", "Module.conv.Conv2d.backward.0", "Module.Net.forward.0",
                     "Module.fc.Linear.parameters_grad.0", "Module.Net.parameters_grad.0"):
            self.assertIn(name, data)
        self.assertFalse(any(k.startswith("Aten.") for k in data))
        self.assertFalse(any(k.startswith("Tensor.flatten") or k.startswith("Tensor.to.") for k in data))
        conv = data["Functional.conv2d.0.forward"]
        self.assertEqual([a["type"] if a else None for a in conv["input_args"][:3]],
                         ["torch.Tensor", "torch.Tensor", "torch.Tensor"])
        self.assertEqual(conv["input_args"][3], [{"type": "int", "value": 1}, {"type": "int", "value": 1}])
        self.assertEqual(data["Tensor.add_.0.forward"]["input_kwargs"], {})
        grads = data["Module.fc.Linear.parameters_grad.0"]
        self.assertEqual(sorted(grads), ["bias", "weight"])
        self.assertEqual(grads["weight"][0]["shape"], [5, 64])

    def test_statistics_are_the_cpus(self):
        self.check_statistics(("Functional.conv2d.0.forward", "Functional.linear.0.forward", "Torch.matmul.0.forward",
                               "Functional.cross_entropy.0.backward", "Module.fc.Linear.parameters_grad.0"))

    def test_compare_the_trace_with_the_cpu_dump(self):
        self.check_compare((0, 1))

    def test_construct_and_stack(self):
        construct = self.load(self.npu, 0, "construct.json")
        self.assertEqual(construct["Functional.conv2d.0.forward"], "Module.conv.Conv2d.forward.0")
        self.assertEqual(construct["Functional.conv2d.0.backward"], "Module.conv.Conv2d.backward.0")
        self.assertEqual(construct["Module.conv.Conv2d.forward.0"], "Module.Net.forward.0")
        self.assertNotIn("Module.fc.Linear.parameters_grad.0", construct)
        stacks = self.load(self.npu, 0, "stack.json")
        conv = [frames for names, frames in stacks.values() if "Functional.conv2d.0.forward" in names]
        self.assertEqual(len(conv), 1)
        self.assertTrue(any("train.py" in frame for frame in conv[0]), conv[0])
        self.assertFalse(any("_msprobe.py" in frame for frame in conv[0]))
        self.assertIn("not dumped", self.export_output)



class RecurrentCheckpointTest(DumpedTwice, script=RECURRENT_SCRIPT, name="recurrent.py"):
    def test_every_entry_pairs(self):
        self.check_every_entry_pairs((0,))

    def test_vf_entries(self):
        data = self.load(self.npu, 0)["data"]
        for name in ("VF.lstm.0.forward", "VF.lstm.0.backward", "Module.lstm.LSTM.forward.0"):
            self.assertIn(name, data)
        lstm = data["VF.lstm.0.forward"]
        self.assertEqual([len(x) if isinstance(x, list) else x["type"] for x in lstm["input_args"][:3]],
                         ["torch.Tensor", 2, 4])  # input, (h0, c0), the flat weights
        self.assertEqual([t["shape"] for t in lstm["output"]], [[2, 5, 6], [1, 2, 6], [1, 2, 6]])
        self.check_statistics(("VF.lstm.0.forward", "VF.lstm.0.backward"))

    def test_recomputed_forwards_are_marked(self):
        npu, cpu = self.load(self.npu, 0)["data"], self.load(self.cpu, 0)["data"]
        marked = sorted(k for k, v in npu.items() if v.get("is_recompute"))
        self.assertEqual(marked, sorted(k for k, v in cpu.items() if v.get("is_recompute")))
        self.assertEqual(marked, ["Functional.linear.2.forward", "Module.block.Block.forward.1",
                                  "Module.block.fc.Linear.forward.1", "Torch.tanh.1.forward"])

    def test_compare_the_trace_with_the_cpu_dump(self):
        self.check_compare((0,))


class Md5Test(DumpedTwice, script=SCRIPT, name="train.py"):
    """`npuscope run --dump md5`: each tensor's CRC-32 beside its statistics, as msprobe's summary_mode md5."""
    dump = "md5"

    def test_md5s(self):
        npu, cpu = self.load(self.npu, 0), self.load(self.cpu, 0)
        self.assertEqual(npu["task"], "statistics")
        hashed = unhashed = 0
        for name, record in npu["data"].items():
            for slot, v in flatten(record, name).items():
                if v and v.get("type") == "torch.Tensor" and v.get("Max") is not None:
                    if "md5" in v:
                        self.assertRegex(v["md5"], "^[0-9a-f]{8}$", "%s %s" % (name, slot))
                        hashed += 1
                    else:
                        unhashed += 1
        self.assertGreater(hashed, 4 * unhashed)
        # Views of their buffer in another order (linear's weight gradient) have none, counted by export
        # over the two steps.
        counted = re.search(r"(\d+) tensors without md5", self.export_output)
        self.assertIsNotNone(counted, self.export_output)
        self.assertLessEqual(unhashed, int(counted.group(1)))
        # What the CPU made (the input, the initial weights) has the same bytes on the NPU.
        conv_npu = flatten(npu["data"]["Functional.conv2d.0.forward"], "")
        conv_cpu = flatten(cpu["data"]["Functional.conv2d.0.forward"], "")
        for slot in ("input.0", "input.1", "input.2"):
            self.assertEqual(conv_npu[slot]["md5"], conv_cpu[slot]["md5"], slot)

    def test_compare_the_trace_with_the_cpu_dump(self):
        self.check_compare((0, 1), mode="md5")


if __name__ == "__main__":
    unittest.main()
