"""samples/pytorch/alexnet_dp.py on 2 ranks under `npuscope run`, rank 0 diffed against the shared real 910B
profile's rank 0 (Note [Diff emulated vs real]): most of the real kernel types pair, and the model-error
table leads with the worst-modelled op type. Slow (ctest label "slow"): two ranks of batch-32 AlexNet.
Skips when ../shared/realdata is absent."""
import json
import os
import sqlite3
import subprocess
import tempfile
import unittest

from test_distributed import torchrun

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = os.environ.get("NPUSCOPE_CLI", "npuscope")
SAMPLE = os.path.join(HERE, "..", "..", "samples", "pytorch", "alexnet_dp.py")
REAL = os.path.join(HERE, "..", "..", "..", "shared", "realdata", "ascend_pytorch_profiler", "text", "level1",
                    "rank0_ascend_pt")


@unittest.skipUnless(os.path.isdir(REAL), "shared/realdata is absent (%s)" % REAL)
class AlexNetDiffTest(unittest.TestCase):
    def test_rank0_pairs_with_the_real_rank0(self):
        with tempfile.TemporaryDirectory() as d:
            # The real profile's batch (32 a rank): outputs pair by their element count.
            p = torchrun(2, "--no_python", CLI, "run", "-o", os.path.join(d, "alexnet_%r.db"), "--",
                         "/usr/bin/python3", SAMPLE, "--steps", "3", "--batch", "32")
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            emulated = os.path.join(d, "alexnet_0.db")
            steps = [s for (s,) in sqlite3.connect(emulated).execute(
                "SELECT step FROM MARKER WHERE kind = 1 ORDER BY start_ns")]
            self.assertGreaterEqual(len(steps), 2, steps)
            # The last whole step (the last marker holds only what follows the final optimizer step):
            # momentum buffers exist, the optimizer runs its whole foreach path.
            self.assertGreaterEqual(len(steps), 3, steps)
            q = subprocess.run([CLI, "diff", emulated, REAL, "--base-step", str(steps[-2]), "--new-step", "50",
                                "--format", "json"], capture_output=True, text=True, timeout=600)
            self.assertEqual(q.returncode, 0, q.stdout + q.stderr)
            report = json.loads(q.stdout)
            notes = [n for n in report["notes"] if n.startswith("emulated vs real:")]
            self.assertEqual(len(notes), 1, report["notes"])
            print(notes[0])
            rows = report["diff_model_error"]
            types = [r for r in rows if r["output_shapes"] == "(all)"]
            for r in types[:10]:
                print("%-26s paired %3d  emulated %9.1f us  real %9.1f us  error %s" % (
                    r["op_type"], r["paired"], r["emulated_ns"] / 1e3, r["real_ns"] / 1e3, r["error_pct"]))
            real_types = [r for r in types if r["paired"] + r["real_only"] > 0]
            paired_types = [r for r in real_types if r["paired"] > 0]
            # Today 23 of the 31 real types pair (CANN's aliases counted as one: MatMulV3 as MatMulV2,
            # OnesLike as Fill), 148 of 187 kernels (79.1 %): Add, BroadcastTo, DSAGenBitMask (the
            # emulated mask is a bool per element, CANN's a bit), Fill, MemSet, RealDiv, TopKV2 (a CPU
            # fallback) and Transpose do not yet (the emulated step launches them differently or not at
            # all). This holds what pairs; issue 39's note lists the rest.
            paired_pct = float(notes[0].split("(")[1].split(" %")[0])
            self.assertGreaterEqual(paired_pct, 77.0, notes[0])
            self.assertGreaterEqual(len(paired_types), 0.7 * len(real_types),
                                    "real kernel types that pair: %s of %s" % (
                                        [r["op_type"] for r in paired_types], [r["op_type"] for r in real_types]))
            gaps = [abs(r["real_ns"] - r["emulated_ns"]) for r in types]
            self.assertEqual(gaps, sorted(gaps, reverse=True))


if __name__ == "__main__":
    unittest.main()
