"""The kinds of training scripts a new user brings, each a step on the device with the ops issue 40 listed running
natively (no CPU fallback for them): ShuffleNet, a U-Net-like block is in test_group_norm.py, a bidirectional GRU text
model with label smoothing and gradient clipping, a pre-norm Transformer encoder with a padding mask and OneCycle, a
GAN with two optimizers, activation checkpointing, advanced indexing, channels_last inference, LR-ASPP segmentation,
Swin, and ResNet under autocast with GradScaler. Each script asserts that no op falls back to the CPU.
"""
import unittest

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

import npuscope.torch as npu
from npu_test_util import DEV, DeviceTestCase

try:
    import torchvision
except ImportError:  # pragma: no cover - Debian's python3-torchvision is installed by bootstrap.sh
    torchvision = None

class ModelFamiliesTest(DeviceTestCase):
    def step(self, fn):
        """One step of `fn`: a finite loss, and no fallback op."""
        npu.reset_fallback_ops()
        torch.manual_seed(0)
        loss = fn()
        self.assertTrue(torch.isfinite(loss.detach().cpu()).all())
        falls = npu.fallback_ops()
        self.assertEqual(falls, {})

    @unittest.skipIf(torchvision is None, "torchvision is not installed")
    def test_vision_families(self):
        def shufflenet():
            m = torchvision.models.shufflenet_v2_x0_5(num_classes=10).to(DEV)
            loss = F.cross_entropy(m(torch.randn(2, 3, 64, 64).to(DEV)), torch.tensor([1, 2]).to(DEV))
            loss.backward()
            return loss

        def segmentation():
            m = torchvision.models.segmentation.lraspp_mobilenet_v3_large(num_classes=3, weights_backbone=None).to(DEV)
            loss = m(torch.randn(2, 3, 64, 64).to(DEV))["out"].square().mean()
            loss.backward()
            return loss

        def swin():
            m = torchvision.models.swin_t(num_classes=5).to(DEV)
            loss = m(torch.randn(1, 3, 64, 64).to(DEV)).square().mean()
            loss.backward()
            return loss

        def channels_last():
            m = torchvision.models.resnet18(num_classes=10).eval().to(DEV).to(memory_format=torch.channels_last)
            with torch.no_grad():
                return m(torch.randn(2, 3, 64, 64).to(DEV).to(memory_format=torch.channels_last)).sum()

        def amp():
            m = torchvision.models.resnet18(num_classes=10).to(DEV)
            opt, scaler = torch.optim.SGD(m.parameters(), lr=0.01), npu.amp.GradScaler()
            with npu.amp.autocast():
                loss = F.cross_entropy(m(torch.randn(2, 3, 64, 64).to(DEV)), torch.tensor([1, 2]).to(DEV))
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            return loss

        for fn in (shufflenet, segmentation, swin, channels_last, amp):
            with self.subTest(fn.__name__):
                self.step(fn)

    def test_text_generative_and_memory_saving_scripts(self):
        def gru_text():
            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.embed = nn.Embedding(100, 16)
                    self.gru = nn.GRU(16, 32, batch_first=True, bidirectional=True)
                    self.fc = nn.Linear(64, 5)

                def forward(self, x):
                    out, _ = self.gru(self.embed(x))
                    return self.fc(out[:, -1])
            m = Model().to(DEV)
            opt = torch.optim.Adam(m.parameters())
            x, y = torch.randint(0, 100, (4, 12)).to(DEV), torch.randint(0, 5, (4,)).to(DEV)
            loss = F.cross_entropy(m(x), y, label_smoothing=0.1)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()
            return loss

        def transformer():
            layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, norm_first=True)
            m = nn.TransformerEncoder(layer, 2).to(DEV)
            opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
            sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-3, total_steps=10)
            mask = torch.zeros(3, 10, dtype=torch.bool)
            mask[:, 7:] = True
            loss = m(torch.randn(3, 10, 32).to(DEV), src_key_padding_mask=mask.to(DEV)).square().mean()
            loss.backward()
            opt.step()
            sched.step()
            return loss

        def gan():
            gen = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16)).to(DEV)
            disc = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1)).to(DEV)
            opt_g, opt_d = torch.optim.Adam(gen.parameters()), torch.optim.Adam(disc.parameters())
            z, real = torch.randn(4, 8).to(DEV), torch.randn(4, 16).to(DEV)
            ones, zeros = torch.ones(4, 1).to(DEV), torch.zeros(4, 1).to(DEV)
            loss_d = (F.binary_cross_entropy_with_logits(disc(real), ones) +
                      F.binary_cross_entropy_with_logits(disc(gen(z).detach()), zeros))
            opt_d.zero_grad()
            loss_d.backward()
            opt_d.step()
            loss_g = F.binary_cross_entropy_with_logits(disc(gen(z)), ones)
            opt_g.zero_grad()
            loss_g.backward()
            opt_g.step()
            return loss_g

        def activation_checkpointing():
            m = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16)).to(DEV)
            loss = checkpoint(m, torch.randn(4, 16).to(DEV).requires_grad_()).square().mean()
            loss.backward()
            return loss

        def advanced_indexing():
            x = torch.randn(10, 8).to(DEV).requires_grad_()
            idx = torch.tensor([1, 5, 5, 7]).to(DEV)
            loss = (x[idx] * 2).sum() + x[:, torch.tensor([0, 3]).to(DEV)].sum()
            loss.backward()
            z = torch.zeros(10).to(DEV)
            z[idx] = 1.0
            z.index_put_((idx,), torch.ones(4).to(DEV), accumulate=True)
            return loss

        for fn in (gru_text, transformer, gan, activation_checkpointing, advanced_indexing):
            with self.subTest(fn.__name__):
                self.step(fn)


if __name__ == "__main__":
    unittest.main()
