"""A small video / volumetric CNN exported from PyTorch to ONNX and run by `npuscope exec` as a user
would: Conv3d (grouped, strided, dilated), BatchNorm3d (one folded into its convolution by the
exporter, one left a BatchNormalization node), ReLU, MaxPool3d, AvgPool3d (padded, ceil_mode),
ConvTranspose3d, a global average pool and a Linear head. The cpu golden and the npu in float32 match
PyTorch's outputs; under force_fp16 they stay within f16's reach."""
import os
import subprocess
import tempfile
import unittest

import numpy as np
import torch

CLI = os.environ.get("NPUSCOPE_CLI", "npuscope")


def run_command(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s\n%s" % (args, p.returncode, p.stdout, p.stderr))
    return p.stdout


class Tiny3dCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv3d(2, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm3d(8)
        self.pool1 = torch.nn.MaxPool3d(2)
        self.conv2 = torch.nn.Conv3d(8, 8, (3, 3, 3), stride=(1, 2, 2), padding=(2, 1, 1), dilation=(2, 1, 1), groups=2)
        self.pool2 = torch.nn.AvgPool3d(2, stride=1, padding=1, ceil_mode=True, count_include_pad=False)
        self.bn2 = torch.nn.BatchNorm3d(8)
        self.up = torch.nn.ConvTranspose3d(8, 4, 2, stride=2, groups=2)
        self.head = torch.nn.Linear(4, 5)

    def forward(self, x):
        x = self.pool1(torch.relu(self.bn1(self.conv1(x))))
        x = self.bn2(self.pool2(torch.relu(self.conv2(x))))
        x = torch.relu(self.up(x))
        return self.head(torch.flatten(torch.nn.functional.adaptive_avg_pool3d(x, 1), 1))


def export(path):
    torch.manual_seed(0)
    model = Tiny3dCnn().eval()
    with torch.no_grad():  # running statistics that are not the identity
        for bn in (model.bn1, model.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(2, 2, 8, 12, 12)
    torch.onnx.export(model, (x,), path, input_names=["video"], output_names=["logits"], opset_version=13,
                      dynamic_axes={"video": {0: "batch", 2: "frames"}, "logits": {0: "batch"}})
    with torch.no_grad():
        return x.numpy(), model(x).numpy()


class Conv3dOnnxTest(unittest.TestCase):
    def test_exec_matches_pytorch_on_cpu_and_npu(self):
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "tiny3d.onnx")
            x, want = export(model)
            np.save(os.path.join(tmp, "video.npy"), x)
            scale = float(np.abs(want).max())
            self.assertGreater(scale, 1e-2, "logits should not be degenerate")

            def run(name, *flags):
                out = os.path.join(tmp, name)
                video = "video=" + os.path.join(tmp, "video.npy")
                stdout = run_command([CLI, "exec", "--model", model, "--input", video, "--output-dir", out, *flags])
                self.assertIn("logits", stdout)
                got = np.load(os.path.join(out, "output_0.npy"))
                self.assertEqual(got.shape, want.shape)
                return float(np.abs(got - want).max())

            self.assertLess(run("cpu", "--device", "cpu"), 1e-5 * max(scale, 1))
            self.assertLess(run("npu", "--device", "npu"), 1e-5 * max(scale, 1))  # must_keep_origin_dtype
            fp16 = run("fp16", "--device", "npu", "--precision-mode", "force_fp16")
            self.assertGreater(fp16, 0, "force_fp16 rounds the activations to f16")
            self.assertLess(fp16, 2e-2 * scale)

    def test_exec_names_the_node_of_a_bad_volume(self):
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "tiny3d.onnx")
            export(model)
            small = np.zeros((1, 2, 1, 12, 12), dtype=np.float32)  # one frame: too few for MaxPool3d's 2x2x2 window
            np.save(os.path.join(tmp, "small.npy"), small)
            p = subprocess.run([CLI, "exec", "--model", model, "--input", "video=" + os.path.join(tmp, "small.npy"),
                                "--output-dir", os.path.join(tmp, "out")], capture_output=True, text=True, timeout=300)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("MaxPool", p.stderr)
            self.assertIn("kernel extent 2 is larger than the padded input 1", p.stderr)


if __name__ == "__main__":
    unittest.main()
