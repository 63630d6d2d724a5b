"""max_pool3d on the device (MaxPool3DWithArgmax, MaxPool3DGradWithArgmax) against PyTorch's CPU kernels, forward,
indices and backward: kernel, stride, padding, dilation, ceil_mode, overlapping windows, unbatched inputs, NaN and
ties, float16 (which the CPU kernel does not take: checked against float32), out= overloads, the fallback for float64
and empty inputs, the CPU's errors; a small video model (Conv3d, BatchNorm3d, MaxPool3d) trained by SGD on the device
against the CPU. No CPU fallback in the native cases."""
import unittest

import torch
import torch.nn.functional as F

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase, forward_backward, relative_error

CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=1),  # overlapping windows: gradients add up
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0), dilation=(2, 1, 2)),
    dict(kernel_size=(1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)),  # the video stem's pool
    dict(kernel_size=(3, 2, 3), stride=2, dilation=(1, 2, 1), ceil_mode=True),
    dict(kernel_size=4, stride=3, padding=2, ceil_mode=True),
]


class MaxPool3dTest(DeviceTestCase):
    def check(self, x, kw, tol=1e-6):
        """Forward values, indices and the input's gradient on the device equal the CPU's."""
        y_cpu, i_cpu = F.max_pool3d(x, return_indices=True, **kw)
        y_dev, i_dev = F.max_pool3d(x.to(DEV), return_indices=True, **kw)
        self.assertEqual(y_dev.device, DEV)
        self.assertEqual(i_dev.dtype, torch.int64)
        self.assertTrue(torch.equal(i_dev.cpu(), i_cpu))
        self.assertTrue(torch.equal(y_dev.cpu(), y_cpu))  # a maximum is one of the input's values: exact
        _, g_cpu = forward_backward(lambda t: F.max_pool3d(t, **kw), x)
        _, g_dev = forward_backward(lambda t: F.max_pool3d(t, **kw), x.to(DEV))
        self.assertLess(relative_error(g_cpu[0], g_dev[0]), tol)

    def test_forward_indices_and_backward_match_the_cpu(self):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(2, 3, 7, 8, 9, generator=g)
        for kw in CASES:
            with self.subTest(**kw):
                self.check(x, kw)
        self.check(x.to(memory_format=torch.channels_last_3d), dict(kernel_size=3, stride=2, padding=1))
        self.check(x.transpose(2, 4), dict(kernel_size=(2, 3, 2)))  # a strided view
        self.assertEqual(npu.fallback_ops(), {})

    def test_unbatched_and_module(self):
        g = torch.Generator().manual_seed(1)
        x = torch.randn(4, 5, 6, 7, generator=g)  # C, D, H, W
        for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)):
            with self.subTest(**kw):
                self.check(x, kw)
        pool = torch.nn.MaxPool3d(3, stride=2, padding=1, return_indices=True)
        (y_cpu, i_cpu), (y_dev, i_dev) = pool(x[None]), pool(x[None].to(DEV))
        self.assertTrue(torch.equal(y_cpu, y_dev.cpu()))
        self.assertTrue(torch.equal(i_cpu, i_dev.cpu()))
        # MaxUnpool3d takes the device's indices as the CPU's.
        unpool = torch.nn.MaxUnpool3d(3, stride=2, padding=1)
        self.assertTrue(torch.equal(unpool(y_cpu, i_cpu, output_size=x[None].shape),
                                    unpool(y_dev.cpu(), i_dev.cpu(), output_size=x[None].shape)))
        self.assertEqual(npu.fallback_ops(), {})

    def test_nan_ties_and_minus_inf(self):
        x = torch.zeros(1, 2, 4, 4, 4)
        x[0, 0, 1, 1, 1] = x[0, 0, 0, 0, 1] = float("nan")  # the last NaN in scan order wins
        x[0, 1].fill_(-float("inf"))  # every window -inf: the index of its first tap inside the input
        x[0, 1, 2, 2, 2] = x[0, 1, 3, 2, 2] = 5.0  # a tie: the first maximum wins
        for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=1, padding=1),
                   dict(kernel_size=2, stride=3, padding=1, ceil_mode=True)):
            with self.subTest(**kw):
                y_cpu, i_cpu = F.max_pool3d(x, return_indices=True, **kw)
                y_dev, i_dev = F.max_pool3d(x.to(DEV), return_indices=True, **kw)
                self.assertTrue(torch.equal(i_cpu, i_dev.cpu()))
                self.assertTrue(torch.allclose(y_cpu, y_dev.cpu(), equal_nan=True))
        self.assertEqual(npu.fallback_ops(), {})

    def test_float16(self):
        g = torch.Generator().manual_seed(2)
        x = torch.randn(2, 3, 6, 7, 8, generator=g).half()
        for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)):
            with self.subTest(**kw):
                y_cpu, i_cpu = F.max_pool3d(x.float(), return_indices=True, **kw)
                xd = x.to(DEV).requires_grad_()
                y_dev, i_dev = F.max_pool3d(xd, return_indices=True, **kw)
                self.assertEqual(y_dev.dtype, torch.float16)
                self.assertTrue(torch.equal(y_dev.cpu(), y_cpu.half()))
                # float16 may tie where float32 did not, so check the indices by the values they point at.
                self.assertTrue(torch.equal(x.float().flatten(2).gather(2, i_dev.cpu().flatten(2)).view_as(y_cpu),
                                            y_cpu))
                gy = torch.randn(y_cpu.shape, generator=g).half()
                y_dev.backward(gy.to(DEV))
                xc = x.float().requires_grad_()
                F.max_pool3d(xc, **kw).backward(gy.float())
                self.assertLess(relative_error(xc.grad, xd.grad), 1e-3)
        self.assertEqual(npu.fallback_ops(), {})

    def test_out_overloads(self):
        x = torch.randn(1, 2, 5, 5, 5)
        y, i = torch.empty(0, device=DEV), torch.empty(0, dtype=torch.long, device=DEV)
        torch.ops.aten.max_pool3d_with_indices.out(x.to(DEV), [3], [2], [1], [1], False, out=y, indices=i)
        y_cpu, i_cpu = torch.ops.aten.max_pool3d_with_indices(x, [3], [2], [1], [1], False)
        self.assertTrue(torch.equal(y.cpu(), y_cpu))
        self.assertTrue(torch.equal(i.cpu(), i_cpu))
        gy = torch.randn(y_cpu.shape)
        gx = torch.empty(0, device=DEV)
        torch.ops.aten.max_pool3d_with_indices_backward.grad_input(gy.to(DEV), x.to(DEV), [3], [2], [1], [1], False, i,
                                                                   grad_input=gx)
        gx_cpu = torch.ops.aten.max_pool3d_with_indices_backward(gy, x, [3], [2], [1], [1], False, i_cpu)
        self.assertLess(relative_error(gx_cpu, gx), 1e-6)
        self.assertEqual(npu.fallback_ops(), {})

    def test_float64_and_empty_inputs_fall_back(self):
        x = torch.randn(1, 2, 4, 4, 4, dtype=torch.float64)
        self.assertTrue(torch.equal(F.max_pool3d(x.to(DEV), 2).cpu(), F.max_pool3d(x, 2)))
        self.assertIn("aten::max_pool3d_with_indices", npu.fallback_ops())
        npu.reset_fallback_ops()
        self.assertEqual(F.max_pool3d(torch.randn(0, 2, 4, 4, 4).to(DEV), 2).shape, (0, 2, 2, 2, 2))
        self.assertIn("aten::max_pool3d_with_indices", npu.fallback_ops())

    def test_bad_arguments_raise_the_cpu_errors(self):
        x = torch.randn(1, 2, 4, 4, 4)
        for kw, text in ((dict(kernel_size=2, padding=2), "pad should be at most half of kernel size"),
                         (dict(kernel_size=5), "Output size is too small"),
                         (dict(kernel_size=(2, 2)), "kernel_size must either be a single int"),
                         (dict(kernel_size=2, stride=0), "stride")):
            with self.subTest(**kw):
                with self.assertRaisesRegex(RuntimeError, text):
                    F.max_pool3d(x, **kw)
                with self.assertRaisesRegex(RuntimeError, text):
                    F.max_pool3d(x.to(DEV), **kw)
        with self.assertRaisesRegex(RuntimeError, "non-batch dimension"):
            F.max_pool3d(torch.randn(1, 0, 4, 4, 4).to(DEV), 2)
        with self.assertRaisesRegex(RuntimeError, "4D or 5D"):
            F.max_pool3d(torch.randn(4, 4, 4).to(DEV), 2)


class VideoNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv3d(3, 8, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm3d(8)
        self.pool1 = torch.nn.MaxPool3d((1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))
        self.conv2 = torch.nn.Conv3d(8, 16, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm3d(16)
        self.pool2 = torch.nn.MaxPool3d(2, ceil_mode=True)
        self.fc = torch.nn.Linear(16, 5)

    def forward(self, x):
        x = self.pool1(torch.relu(self.bn1(self.conv1(x))))
        x = self.pool2(torch.relu(self.bn2(self.conv2(x))))
        return self.fc(x.mean((2, 3, 4)))


class VideoModelTest(DeviceTestCase):
    def test_conv3d_maxpool3d_batchnorm3d_sgd_steps_match_the_cpu(self):
        torch.manual_seed(0)
        cpu_model, dev_model = VideoNet(), VideoNet()
        dev_model.load_state_dict(cpu_model.state_dict())
        dev_model.to(DEV)
        g = torch.Generator().manual_seed(3)
        xs = [torch.randn(2, 3, 5, 16, 16, generator=g) for _ in range(3)]
        ys = [torch.randint(0, 5, (2,), generator=g) for _ in range(3)]
        losses = {}
        for model, dev in ((cpu_model, "cpu"), (dev_model, DEV)):
            opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
            losses[dev] = []
            for x, y in zip(xs, ys):
                loss = F.cross_entropy(model(x.to(dev)), y.to(dev))
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses[dev].append(loss.item())
        for a, b in zip(losses["cpu"], losses[DEV]):
            self.assertAlmostEqual(a, b, delta=1e-4 * abs(a))
        for (name, a), b in zip(cpu_model.state_dict().items(), dev_model.state_dict().values()):
            if a.is_floating_point():
                self.assertLess(relative_error(a, b), 1e-4, name)
        self.assertEqual(npu.fallback_ops(), {})


if __name__ == "__main__":
    unittest.main()
