"""The recurrent sample models (samples/pytorch/recurrent_models.py: an LSTM language model with
initial states, a bidirectional GRU classifier over packed sequences), exported by torch.onnx and run
by `npuscope exec` the way a user runs them, agree with PyTorch's own outputs: on the cpu golden and on
the npu keeping f32 tightly, under force_fp16 within f16's error."""
import os
import subprocess
import tempfile
import unittest

import numpy as np
import onnx

import recurrent_models

CLI = os.environ.get("NPUSCOPE_CLI", "npuscope")

# (device, precision mode, minimum cosine, maximum absolute error). Measured: f32 runs within 1.2e-7
# of PyTorch, force_fp16 within 2.7e-4 (cosine 0.9999999); the logits and states are below 1.
RUNS = [
    ("cpu", None, 0.999999, 1e-6),
    ("npu", "must_keep_origin_dtype", 0.999999, 1e-6),
    ("npu", "force_fp16", 0.9999, 2e-3),
]


def cosine(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


class RecurrentOnnxTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.exported = {name: recurrent_models.export(name, cls.tmp.name) for name in recurrent_models.MODELS}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def exec_model(self, name, device, mode):
        path, files, expected = self.exported[name]
        out_dir = os.path.join(self.tmp.name, f"{name}_{device}_{mode}")
        cmd = [CLI, "exec", "--model", path, "--device", device, "--output-dir", out_dir]
        for k, f in files.items():
            cmd += ["--input", f"{k}={f}"]
        if mode:
            cmd += ["--precision-mode", mode]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, f"{' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
        return [np.load(os.path.join(out_dir, f"output_{i}.npy")) for i in range(len(expected))]

    def test_export_writes_recurrent_nodes(self):
        ops = {}
        for name, (path, _, _) in self.exported.items():
            nodes = onnx.load(path).graph.node
            ops[name] = [n.op_type for n in nodes if n.op_type in ("LSTM", "GRU")]
            if name == "gru_classifier":  # the packed sequence's lengths reach the GRU
                gru = next(n for n in nodes if n.op_type == "GRU")
                self.assertGreater(len(gru.input), 4)
                self.assertTrue(gru.input[4])
        self.assertEqual(ops, {"lstm_lm": ["LSTM", "LSTM"], "gru_classifier": ["GRU"]})

    def test_cpu_and_npu_match_pytorch(self):
        for name in recurrent_models.MODELS:
            expected = self.exported[name][2]
            for device, mode, min_cos, max_abs in RUNS:
                got = self.exec_model(name, device, mode)
                for i, (g, e) in enumerate(zip(got, expected)):
                    with self.subTest(model=name, device=device, mode=mode, output=i):
                        self.assertEqual(g.shape, e.shape)
                        err = float(np.max(np.abs(g.astype(np.float64) - e)))
                        self.assertGreaterEqual(cosine(g, e), min_cos)
                        self.assertLessEqual(err, max_abs)


if __name__ == "__main__":
    unittest.main()
