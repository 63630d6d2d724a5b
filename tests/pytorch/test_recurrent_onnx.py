"""The recurrent sample models (samples/pytorch/recurrent_models.py: an LSTM language model with
initial states, a bidirectional GRU classifier over packed sequences, a ReLU RNN tagger), exported by
torch.onnx and run by `npuscope exec` the way a user runs them, agree with PyTorch's own outputs: on
the cpu golden and on the npu keeping f32 tightly, under force_fp16 within f16's error; and so does
the oldest opset the exporter writes them at (9)."""
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

    def exec_model(self, name, device, mode, exported=None):
        path, files, expected = (exported or self.exported)[name]
        out_dir = os.path.join(os.path.dirname(path), f"{name}_{device}_{mode}")
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
            ops[name] = [n.op_type for n in nodes if n.op_type in ("LSTM", "GRU", "RNN")]
            if name == "gru_classifier":  # the packed sequence's lengths reach the GRU
                gru = next(n for n in nodes if n.op_type == "GRU")
                self.assertGreater(len(gru.input), 4)
                self.assertTrue(gru.input[4])
            if name == "rnn_tagger":  # the exporter names the non-default activation
                rnn = next(n for n in nodes if n.op_type == "RNN")
                acts = [a.strings for a in rnn.attribute if a.name == "activations"]
                self.assertEqual(acts, [[b"Relu"]])
        self.assertEqual(ops, {"lstm_lm": ["LSTM", "LSTM"], "gru_classifier": ["GRU"], "rnn_tagger": ["RNN"]})

    def test_cpu_and_npu_match_pytorch(self):
        for name in recurrent_models.MODELS:
            expected = self.exported[name][2]
            for device, mode, min_cos, max_abs in RUNS:
                with self.subTest(model=name, device=device, mode=mode):
                    self.check(self.exec_model(name, device, mode), expected, min_cos, max_abs)

    def check(self, got, expected, min_cos, max_abs):
        for i, (g, e) in enumerate(zip(got, expected)):
            with self.subTest(output=i):
                self.assertEqual(g.shape, e.shape)
                self.assertGreaterEqual(cosine(g, e), min_cos)
                self.assertLessEqual(float(np.max(np.abs(g.astype(np.float64) - e))), max_abs)

    def test_opset_9_export_runs_on_the_npu(self):
        out_dir = os.path.join(self.tmp.name, "opset9")
        os.makedirs(out_dir)
        exported = {name: recurrent_models.export(name, out_dir, opset=9) for name in recurrent_models.MODELS}
        for name in recurrent_models.MODELS:
            with self.subTest(model=name):
                got = self.exec_model(name, "npu", "must_keep_origin_dtype", exported)
                self.check(got, exported[name][2], *RUNS[1][2:])


if __name__ == "__main__":
    unittest.main()
