"""Inference of torchvision's ResNet-50 and ViT-B/16 on the device matches CPU PyTorch."""
import copy
import unittest

import torch
import torch.nn.functional as F
import torchvision

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase


class InferenceTest(DeviceTestCase):
    def check(self, model, x):
        model.eval()
        dev_model = copy.deepcopy(model).to(DEV)
        with torch.no_grad():
            expected = model(x)
            actual = dev_model(x.to(DEV)).cpu()
        cosine = F.cosine_similarity(expected.flatten().double(), actual.flatten().double(), dim=0).item()
        self.assertGreaterEqual(cosine, 0.99999)
        self.assertEqual(npu.fallback_ops(), {})

    def test_resnet50(self):
        torch.manual_seed(0)
        self.check(torchvision.models.resnet50(), torch.randn(2, 3, 224, 224))

    def test_vit_b_16(self):
        torch.manual_seed(0)
        model = torchvision.models.vit_b_16()
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)  # torchvision starts the head at zero
        self.check(model, torch.randn(1, 3, 224, 224))


if __name__ == "__main__":
    unittest.main()
