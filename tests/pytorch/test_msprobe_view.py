"""`npuscope view --compare TRACE DUMP` end to end (docs/compare.md "In the viewer"): the training script of
test_msprobe_names.py recorded under `npuscope run --dump stats` on the emulated NPU, and its CPU run dumped
in msprobe's layout, compared in the viewer's Compare panel under Xvfb as `npuscope compare` compares them:
the trace is a side as a dump is (Note [Dump comparison sides] in comparator/dump_sides.h), its dump rebuilt
under msprobe's names step by step, and every entry pairs."""
import json
import os
import unittest

import test_msprobe_names
from script_test_util import CLI, ScriptTestCase, run_command


class MsprobeViewTest(ScriptTestCase, script=test_msprobe_names.SCRIPT, name="train.py"):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        test_msprobe_names.record_runs(cls)

    def view(self, *args):
        """`npuscope view ARGS` under Xvfb, one frame: its --frame-stats' "dumps"."""
        shot, stats = os.path.join(self.dir.name, "view.png"), os.path.join(self.dir.name, "view.json")
        # -f: xvfb-run's own authority directory can fail to go at exit, and it then exits 5
        # (tests/cli_test_util.h, xvfb_run_prefix).
        run_command(["xvfb-run", "-a", "-n", str(400 + os.getpid() % 500), "-f", os.path.join(self.dir.name, "xauth"),
                     CLI, "view", *args, "--size", "1280x1000", "--screenshot", shot, "--frame-stats", stats])
        with open(stats) as f:
            frame = json.load(f)
        self.assertIn("dumps", frame, "the Compare panel drew nothing")
        return frame

    def cpu_entries(self, step):
        with open(os.path.join(self.cpu, "step%d" % step, "rank0", "dump.json")) as f:
            return len(json.load(f)["data"])

    def test_the_trace_against_the_cpu_dump(self):
        frame = self.view("--compare", self.trace, self.cpu)
        d = frame["dumps"]
        self.assertEqual(frame["lanes_drawn"], 0, "no TRACE: the Compare panel alone")
        self.assertEqual((d["error"], d["status"], d["notes"]), ("", "", []), d)
        self.assertEqual(d["comparisons"], 2, "two steps, each paired with the CPU's")
        # The first step shown first; the trace of one process knows no rank.
        self.assertEqual(d["place"], "step 0, rank ?")
        self.assertEqual(d["mode"], "statistics")
        self.assertEqual((d["unmatched_npu"], d["unmatched_bench"]), (0, 0), d)
        self.assertEqual(d["entries"], self.cpu_entries(0))
        self.assertEqual(d["first_failing"], "", d)

    def test_the_cpu_dump_against_the_trace_beside_its_timeline(self):
        # The trace as the bench side and as the timeline: the Compare tab beside it.
        frame = self.view(self.trace, "--compare", self.cpu, self.trace, "--panel", "compare")
        d = frame["dumps"]
        self.assertGreater(frame["lanes_drawn"], 0)
        self.assertEqual((d["error"], d["comparisons"]), ("", 2), d)
        self.assertEqual((d["unmatched_npu"], d["unmatched_bench"]), (0, 0), d)


if __name__ == "__main__":
    unittest.main()
