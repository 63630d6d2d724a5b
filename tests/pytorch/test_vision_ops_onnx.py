"""Einsum, GridSample, RoiAlign and NonMaxSuppression as PyTorch's exporter writes them (opset 16):
small modules (torch.einsum, F.grid_sample, torchvision.ops.roi_align / nms) exported with
torch.onnx.export and run with `npuscope exec` on the cpu golden backend and on the NPU
(must_keep_origin_dtype), against torch's own outputs."""
import os
import subprocess
import tempfile
import unittest

import numpy as np
import torch
import torch.nn.functional as F

CLI = os.environ.get("NPUSCOPE_CLI", "npuscope")

try:
    import torchvision
except ImportError:  # the detection ops are optional
    torchvision = None


class Einsums(torch.nn.Module):
    def forward(self, a, b, sq):
        return (torch.einsum("bij,bjk->bik", a, b), torch.einsum("...ii->...i", sq), torch.einsum("bij->j", a),
                torch.einsum("bij,bkj->bik", a, a), torch.einsum("bii", sq))


class GridSamples(torch.nn.Module):
    """Every mode, padding mode and align_corners. Bicubic with border or reflection padding samples
    inside [-1, 1] only: beyond it the ONNX reference (and onnxruntime, and the emulator) pads the
    position before taking the 4 x 4 taps, where PyTorch pads each tap."""

    def forward(self, x, grid, inner):
        outs = []
        for mode in ("bilinear", "nearest", "bicubic"):
            for pad in ("zeros", "border", "reflection"):
                g = inner if mode == "bicubic" and pad != "zeros" else grid
                for align in (False, True):
                    outs.append(F.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=align))
        return tuple(outs)


class Detection(torch.nn.Module):
    def forward(self, x, rois, boxes, scores):
        pooled = torchvision.ops.roi_align(x, rois, output_size=(3, 2), spatial_scale=0.5, sampling_ratio=2,
                                           aligned=True)
        keep = torchvision.ops.nms(boxes, scores, 0.4)
        return pooled, keep


def run_command(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s\n%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
    return p.stdout


class VisionOpsOnnxTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def check(self, name, module, inputs, rtol=1e-4, atol=1e-5):
        """Exports module(*inputs), runs it with npuscope exec on cpu and npu, compares to torch."""
        path = os.path.join(self.dir.name, name + ".onnx")
        names = ["in%d" % i for i in range(len(inputs))]
        with torch.no_grad():
            want = module(*inputs)
            torch.onnx.export(module, inputs, path, opset_version=16, input_names=names)
        want = want if isinstance(want, tuple) else (want,)
        args = []
        for n, t in zip(names, inputs):
            f = os.path.join(self.dir.name, "%s_%s.npy" % (name, n))
            np.save(f, t.numpy())
            args += ["--input", "%s=%s" % (n, f)]
        for device in ("cpu", "npu"):
            out = os.path.join(self.dir.name, "%s_%s" % (name, device))
            extra = ["--precision-mode", "must_keep_origin_dtype"] if device == "npu" else []
            run_command([CLI, "exec", "--model", path, "--device", device, "--output-dir", out] + args + extra)
            for i, w in enumerate(want):
                got = np.load(os.path.join(out, "output_%d.npy" % i))
                self.assertEqual(got.shape, tuple(w.shape), "%s output %d on %s" % (name, i, device))
                np.testing.assert_allclose(got, w.numpy(), rtol=rtol, atol=atol,
                                           err_msg="%s output %d on %s" % (name, i, device))

    def test_einsum(self):
        g = torch.Generator().manual_seed(0)
        a, b = torch.randn(2, 3, 4, generator=g), torch.randn(2, 4, 5, generator=g)
        sq = torch.randn(2, 3, 3, generator=g)
        self.check("einsum", Einsums(), (a, b, sq))

    def test_grid_sample(self):
        g = torch.Generator().manual_seed(1)
        x = torch.randn(2, 3, 5, 6, generator=g)
        # Inside, on and beyond the edges, so that every padding mode matters.
        grid = torch.rand(2, 4, 7, 2, generator=g) * 2.6 - 1.3
        inner = torch.rand(2, 4, 7, 2, generator=g) * 2 - 1
        self.check("grid_sample", GridSamples(), (x, grid, inner))

    @unittest.skipIf(torchvision is None, "torchvision is not installed")
    def test_roi_align_and_nms(self):
        g = torch.Generator().manual_seed(2)
        x = torch.randn(2, 3, 8, 9, generator=g)
        rois = torch.tensor([[0, 1.0, 2.0, 11.0, 13.0], [1, 4.0, 0.0, 16.0, 9.0], [0, 0.0, 0.0, 3.0, 3.0]])
        xy = torch.rand(12, 2, generator=g) * 20
        boxes = torch.cat([xy, xy + torch.rand(12, 2, generator=g) * 10 + 1], dim=1)
        scores = torch.rand(12, generator=g)
        self.check("detection", Detection(), (x, rois, boxes, scores))


if __name__ == "__main__":
    unittest.main()
