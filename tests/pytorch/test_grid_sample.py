"""F.grid_sample on the device against PyTorch's CPU kernels: the forward (GridSample) and the backward
(GridSampler2DGrad), the gradients of the input and of the grid, for bilinear, nearest and bicubic (each tap padded, as
PyTorch) with each padding mode and both align_corners conventions, samples outside the map, odd shapes, the backward's
output_mask, float16, and an affine_grid + grid_sample spatial-transformer training step (affine_grid's linspace is
LinSpace); no CPU fallback. float64 runs on the fallback."""
import copy
import unittest

import torch
import torch.nn.functional as F

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase, relative_error


def sample_inputs(seed):
    """An image and a grid reaching 20% beyond the map on every side."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(2, 3, 6, 7, generator=g), torch.rand(2, 4, 5, 2, generator=g) * 2.4 - 1.2


class SpatialTransformer(torch.nn.Module):
    """A localisation net predicts an affine transform per image (starting near the identity); the image is
    resampled through it and a convolution reads the result."""

    def __init__(self):
        super().__init__()
        self.loc = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                       torch.nn.Linear(4 * 6 * 6, 6))
        with torch.no_grad():
            self.loc[-1].weight.mul_(0.1)
            self.loc[-1].bias.copy_(torch.tensor([1.0, 0, 0, 0, 1, 0]))
        self.head = torch.nn.Conv2d(2, 3, 3, padding=1)

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        grid = F.affine_grid(theta, list(x.shape), align_corners=False)
        return self.head(F.grid_sample(x, grid, padding_mode="border", align_corners=False))


class GridSampleTest(DeviceTestCase):
    def test_forward_and_backward(self):
        x, grid = sample_inputs(0)
        for mode in ("bilinear", "nearest"):
            for pad in ("zeros", "border", "reflection"):
                for ac in (False, True):
                    with self.subTest(mode=mode, padding_mode=pad, align_corners=ac):
                        self.check(lambda a, g: F.grid_sample(a, g, mode=mode, padding_mode=pad, align_corners=ac),
                                   x, grid, tol=1e-5)
        self.assertEqual(npu.fallback_ops(), {})

    def test_samples_far_outside(self):
        # Points up to 3x beyond the map: zeros reads nothing there, border clamps (no grid gradient along a clamped
        # axis), reflection folds them back in several times.
        x, _ = sample_inputs(1)
        grid = torch.rand(2, 3, 4, 2, generator=torch.Generator().manual_seed(2)) * 8 - 4
        for pad in ("zeros", "border", "reflection"):
            for ac in (False, True):
                with self.subTest(padding_mode=pad, align_corners=ac):
                    self.check(lambda a, g: F.grid_sample(a, g, padding_mode=pad, align_corners=ac), x, grid, tol=1e-5)
        self.assertEqual(npu.fallback_ops(), {})

    def test_only_what_is_asked(self):
        x, grid = sample_inputs(3)
        # Only the input needs a gradient (a fixed sampling grid), then only the grid (a fixed image).
        for x_grad, grid_grad in ((True, False), (False, True)):
            with self.subTest(x_grad=x_grad, grid_grad=grid_grad):
                grads = []
                for dev in ("cpu", DEV):
                    xd = x.clone().to(dev).requires_grad_(x_grad)
                    gd = grid.clone().to(dev).requires_grad_(grid_grad)
                    F.grid_sample(xd, gd, align_corners=True).square().sum().backward()
                    grads.append(xd.grad if x_grad else gd.grad)
                    self.assertIsNone(gd.grad if x_grad else xd.grad)
                self.assertLess(relative_error(grads[0], grads[1]), 1e-5)
        # The aten op itself leaves grad_input undefined when output_mask does not ask for it, as the CPU kernel.
        go = torch.randn(2, 3, 4, 5)
        cpu = torch.ops.aten.grid_sampler_2d_backward(go, x, grid, 0, 1, False, [False, True])
        dev = torch.ops.aten.grid_sampler_2d_backward(go.to(DEV), x.to(DEV), grid.to(DEV), 0, 1, False, [False, True])
        self.assertIsNone(cpu[0])
        self.assertIsNone(dev[0])
        self.assertLess(relative_error(cpu[1], dev[1]), 1e-5)
        self.assertEqual(npu.fallback_ops(), {})

    def test_bicubic_forward_and_backward(self):
        # Points up to 2.5x beyond the map: border and reflection pad each of the 16 taps, not the position.
        for seed, shape, out in ((4, (2, 3, 6, 7), (4, 5)), (7, (1, 2, 1, 5), (3, 1)), (8, (3, 1, 9, 2), (2, 7))):
            g = torch.Generator().manual_seed(seed)
            x = torch.randn(*shape, generator=g)
            grid = torch.rand(shape[0], *out, 2, generator=g) * 5 - 2.5
            for pad in ("zeros", "border", "reflection"):
                for ac in (False, True):
                    with self.subTest(shape=shape, padding_mode=pad, align_corners=ac):
                        self.check(lambda a, gr: F.grid_sample(a, gr, mode="bicubic", padding_mode=pad,
                                                               align_corners=ac), x, grid, tol=1e-5)
        self.assertEqual(npu.fallback_ops(), {})

    def test_float64_runs_on_the_fallback(self):
        x, grid = sample_inputs(4)
        self.check(lambda a, g: F.grid_sample(a, g, mode="bicubic", align_corners=False), x.double(), grid.double())
        self.assertEqual(npu.fallback_ops(), {"aten::grid_sampler_2d": 1, "aten::grid_sampler_2d_backward": 1})

    def test_float16(self):
        # The device in float16 against the CPU in float32 on the same (float16-exact) values.
        x, grid = sample_inputs(5)
        x, grid = x.half().float(), grid.half().float()
        dy = torch.randn(2, 3, 4, 5, generator=torch.Generator().manual_seed(6)).half()
        results = []
        for dev, dtype in (("cpu", torch.float32), (DEV, torch.float16)):
            xd = x.clone().to(dev, dtype).requires_grad_()
            gd = grid.clone().to(dev, dtype).requires_grad_()
            y = F.grid_sample(xd, gd, align_corners=False)
            y.backward(dy.to(dev, dtype))
            self.assertEqual((y.dtype, xd.grad.dtype, gd.grad.dtype), (dtype,) * 3)
            results.append((y, xd.grad, gd.grad))
        for a, b in zip(*results):
            self.assertLess(relative_error(a, b), 5e-3)
        self.assertEqual(npu.fallback_ops(), {})

    def test_spatial_transformer_training_step(self):
        torch.manual_seed(0)
        cpu = SpatialTransformer()
        dev = copy.deepcopy(cpu).to(DEV)
        g = torch.Generator().manual_seed(6)
        x, target = torch.randn(2, 2, 8, 8, generator=g), torch.randn(2, 3, 8, 8, generator=g)
        losses = []
        for model, device in ((cpu, "cpu"), (dev, DEV)):
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            loss = F.mse_loss(model(x.to(device)), target.to(device))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        self.assertAlmostEqual(losses[0], losses[1], places=5)
        for (name, a), b in zip(cpu.named_parameters(), dev.parameters()):
            self.assertLess(relative_error(a, b), 1e-5, name)
        # affine_grid's base grid comes from aten::linspace (twice in the forward, twice in its backward): LinSpace.
        self.assertEqual(npu.fallback_ops(), {})


if __name__ == "__main__":
    unittest.main()
