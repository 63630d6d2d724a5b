"""Video models on the device: 3-D convolutions (Conv3d, Conv3DBackpropInput, Conv3DBackpropFilter) and transposed
3-D convolutions against PyTorch's CPU kernels, forward and backward, and torchvision's R3D-18 trained a step on the
device against the CPU."""
import unittest

import torch
import torch.nn.functional as F

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase, relative_error

try:
    import torchvision
except ImportError:  # pragma: no cover - Debian's python3-torchvision is installed by bootstrap.sh
    torchvision = None


class Conv3dTest(DeviceTestCase):
    def test_conv3d_forward_and_backward_match_the_cpu(self):
        g = torch.Generator().manual_seed(0)
        cases = [  # (input, weight, bias, stride, padding, dilation, groups)
            ((2, 3, 5, 6, 7), (4, 3, 3, 3, 3), True, 1, 1, 1, 1),
            ((1, 4, 6, 8, 8), (6, 2, 3, 1, 3), False, (1, 2, 2), (1, 0, 1), 1, 2),
            ((2, 2, 7, 7, 7), (3, 2, 2, 2, 2), True, 2, 0, (2, 1, 1), 1),
            ((1, 3, 4, 9, 9), (5, 3, 1, 1, 1), True, 1, 0, 1, 1),  # 1x1x1: no vol2col
        ]
        for x_shape, w_shape, bias, stride, padding, dilation, groups in cases:
            with self.subTest(x=x_shape, w=w_shape, stride=stride, padding=padding, groups=groups):
                x, w = torch.randn(x_shape, generator=g), torch.randn(w_shape, generator=g)
                inputs = [x, w] + ([torch.randn(w_shape[0], generator=g)] if bias else [])
                self.check(lambda *t: F.conv3d(t[0], t[1], t[2] if len(t) > 2 else None, stride, padding, dilation,
                                               groups), *inputs, tol=1e-5)
        self.assertEqual(npu.fallback_ops(), {})

    def test_transposed_conv3d_matches_the_cpu(self):
        g = torch.Generator().manual_seed(1)
        x, w, b = torch.randn(2, 4, 3, 4, 5, generator=g), torch.randn(4, 3, 3, 3, 3, generator=g), torch.randn(3)
        self.check(lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1), x, w, b, tol=1e-5)
        self.assertEqual(npu.fallback_ops(), {})

    def test_the_trace_names_the_3d_ops(self):
        x = torch.randn(1, 2, 4, 4, 4).to(DEV).requires_grad_()
        w = torch.randn(3, 2, 3, 3, 3).to(DEV).requires_grad_()
        F.conv3d(x, w, padding=1).sum().backward()
        npu.synchronize()
        self.assertEqual(x.grad.shape, x.shape)
        self.assertEqual(w.grad.shape, w.shape)


@unittest.skipIf(torchvision is None, "torchvision is not installed")
class VideoModelTest(DeviceTestCase):
    def test_r3d_18_trains_a_step_as_on_the_cpu(self):
        torch.manual_seed(0)
        cpu_model = torchvision.models.video.r3d_18(num_classes=5)
        dev_model = torchvision.models.video.r3d_18(num_classes=5)
        dev_model.load_state_dict(cpu_model.state_dict())
        dev_model.to(DEV)
        g = torch.Generator().manual_seed(2)
        x, y = torch.randn(2, 3, 4, 32, 32, generator=g), torch.tensor([1, 3])
        results = []
        for model, dev in ((cpu_model, "cpu"), (dev_model, DEV)):
            opt = torch.optim.SGD(model.parameters(), lr=0.01)
            loss = F.cross_entropy(model(x.to(dev)), y.to(dev))
            opt.zero_grad()
            loss.backward()
            results.append((loss.item(), model.stem[0].weight.grad.cpu(), model.fc.weight.grad.cpu()))
            opt.step()
        (cpu_loss, cpu_stem, cpu_fc), (dev_loss, dev_stem, dev_fc) = results
        self.assertAlmostEqual(cpu_loss, dev_loss, delta=1e-4 * abs(cpu_loss))
        self.assertLess(relative_error(cpu_stem, dev_stem), 1e-3)
        self.assertLess(relative_error(cpu_fc, dev_fc), 1e-3)
        for a, b in zip(cpu_model.parameters(), dev_model.parameters()):
            self.assertLess(relative_error(a, b), 1e-4)
        self.assertEqual(npu.fallback_ops(), {})


if __name__ == "__main__":
    unittest.main()
