"""Training steps of small models on the PyTorch device (npuscope.torch) against CPU PyTorch, side by side in one
process: the per-op host path of the device, where a step is many small ops rather than a few big GEMMs.

The models are the kinds of training scripts issue 40's new users brought (tests/pytorch/test_model_families.py
runs them for correctness): ShuffleNet, a U-Net with GroupNorm, transposed convolutions and bilinear upsampling, a
bidirectional GRU text classifier with label smoothing and gradient clipping, a pre-norm Transformer encoder with a
padding mask and a OneCycle schedule, a GAN with two optimizers, a Conv1d + CTC speech model and an MLP. Each step
is forward, backward and the optimizer's step, ended by `loss.item()`, so a device step includes waiting for its
last kernel. CPU PyTorch runs with the faster of 1 and nproc intra-op threads; CPU and device rounds alternate. Target:
the median ratio over the models at most 2x.

Run: PYTHONPATH=BUILD/python /usr/bin/python3 bench/torch_small_models.py  (JSON on stdout)
"""
import argparse
import copy
import json
import os
import statistics
import sys
import time

TARGET_MEDIAN_RATIO = 2.0


def models(torch, torchvision):
    """name -> (make_model, make_batch, make_optimizers, loss_of(model, batch)); every tensor built on the CPU."""
    nn, F = torch.nn, torch.nn.functional

    class UNet(nn.Module):
        def __init__(self, c=16):
            super().__init__()

            def block(i, o):
                return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.GroupNorm(4, o), nn.ReLU(),
                                     nn.Conv2d(o, o, 3, padding=1), nn.GroupNorm(4, o), nn.ReLU())
            self.down1, self.down2, self.mid = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
            self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
            self.dec2 = block(4 * c, 2 * c)
            self.dec1 = block(3 * c, c)
            self.head = nn.Conv2d(c, 2, 1)

        def forward(self, x):
            d1 = self.down1(x)
            d2 = self.down2(F.max_pool2d(d1, 2))
            m = self.mid(F.max_pool2d(d2, 2))
            u2 = self.dec2(torch.cat([self.up2(m), d2], 1))
            u1 = F.interpolate(u2, scale_factor=2, mode="bilinear", align_corners=False)
            return self.head(self.dec1(torch.cat([u1, d1], 1)))

    class GruText(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(1000, 64)
            self.gru = nn.GRU(64, 64, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(128, 5)

        def forward(self, x):
            out, _ = self.gru(self.embed(x))
            return self.fc(out[:, -1])

    class Speech(nn.Module):
        def __init__(self, classes=20):
            super().__init__()
            self.net = nn.Sequential(nn.Conv1d(40, 64, 5, padding=2), nn.BatchNorm1d(64), nn.ReLU(),
                                     nn.Conv1d(64, 64, 5, padding=2), nn.BatchNorm1d(64), nn.ReLU(),
                                     nn.Conv1d(64, classes, 1))

        def forward(self, x):
            return self.net(x).permute(2, 0, 1).log_softmax(2)  # [T, N, C]

    def adam(m):
        return [torch.optim.Adam(m.parameters(), lr=1e-4)]

    def sgd(m):
        return [torch.optim.SGD(m.parameters(), lr=1e-3, momentum=0.9)]

    def adamw_onecycle(m):
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
        return [opt, torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-4, total_steps=1000)]

    def classify(m, b):
        return F.cross_entropy(m(b[0]), b[1])

    def gru_loss(m, b):
        return F.cross_entropy(m(b[0]), b[1], label_smoothing=0.1)

    def transformer_loss(m, b):
        return m(b[0], src_key_padding_mask=b[1]).square().mean()

    def ctc_loss(m, b):
        x, targets, in_lens, tgt_lens = b
        return F.ctc_loss(m(x), targets, in_lens, tgt_lens)

    def transformer():
        layer = nn.TransformerEncoderLayer(128, 4, 256, batch_first=True, norm_first=True, dropout=0.0)
        return nn.TransformerEncoder(layer, 2)

    def padding_mask():
        mask = torch.zeros(8, 32, dtype=torch.bool)
        mask[:, 24:] = True
        return mask

    def gan():
        gen = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 784),
                            nn.Tanh())
        disc = nn.Sequential(nn.Linear(784, 256), nn.LeakyReLU(0.2), nn.Linear(256, 128), nn.LeakyReLU(0.2),
                             nn.Linear(128, 1))
        return nn.ModuleDict({"gen": gen, "disc": disc})

    def gan_optimizers(m):
        return [torch.optim.Adam(m["gen"].parameters(), lr=2e-4, betas=(0.5, 0.999)),
                torch.optim.Adam(m["disc"].parameters(), lr=2e-4, betas=(0.5, 0.999))]

    def mlp():
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))

    def g(seed):
        return torch.Generator().manual_seed(seed)

    table = {
        "unet_groupnorm": (UNet, lambda: (torch.randn(4, 3, 64, 64, generator=g(1)),
                                          torch.randint(0, 2, (4, 64, 64), generator=g(2))), adam, classify),
        "gru_text": (GruText, lambda: (torch.randint(0, 1000, (16, 32), generator=g(3)),
                                       torch.randint(0, 5, (16,), generator=g(4))), adam, gru_loss),
        "transformer_encoder": (transformer, lambda: (torch.randn(8, 32, 128, generator=g(5)), padding_mask()),
                                adamw_onecycle, transformer_loss),
        "gan": (gan, lambda: (torch.randn(32, 32, generator=g(6)), torch.rand(32, 784, generator=g(7)) * 2 - 1),
                gan_optimizers, None),
        "conv1d_ctc": (Speech, lambda: (torch.randn(4, 40, 100, generator=g(8)),
                                        torch.randint(1, 20, (4, 20), generator=g(9)),
                                        torch.full((4,), 100, dtype=torch.long), torch.full((4,), 20, dtype=torch.long)),
                       adam, ctc_loss),
        "mlp": (mlp, lambda: (torch.randn(64, 784, generator=g(10)), torch.randint(0, 10, (64,), generator=g(11))),
                sgd, classify),
    }
    if torchvision is not None:
        table["shufflenet_v2"] = (lambda: torchvision.models.shufflenet_v2_x0_5(num_classes=10),
                                  lambda: (torch.randn(8, 3, 64, 64, generator=g(0)),
                                           torch.randint(0, 10, (8,), generator=g(12))), sgd, classify)
    return table


def gan_step(torch, m, b, opts):
    F = torch.nn.functional
    z, real = b
    ones, zeros = torch.ones(real.shape[0], 1, device=real.device), torch.zeros(real.shape[0], 1, device=real.device)
    opt_g, opt_d = opts
    loss_d = (F.binary_cross_entropy_with_logits(m["disc"](real), ones) +
              F.binary_cross_entropy_with_logits(m["disc"](m["gen"](z).detach()), zeros))
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    loss_g = F.binary_cross_entropy_with_logits(m["disc"](m["gen"](z)), ones)
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    return loss_g


def step_times(torch, name, spec, model, batch, warmup, steps):
    """The times (ms) of `steps` steps after `warmup`, each ended by loss.item()."""
    _, _, make_opts, loss_of = spec
    opts = make_opts(model)
    optimizers = [o for o in opts if isinstance(o, torch.optim.Optimizer)]
    schedulers = [o for o in opts if not isinstance(o, torch.optim.Optimizer)]
    times = []
    for _ in range(warmup + steps):
        start = time.perf_counter()
        if name == "gan":
            loss = gan_step(torch, model, batch, optimizers)
        else:
            loss = loss_of(model, batch)
            for o in optimizers:
                o.zero_grad()
            loss.backward()
            if name == "gru_text":
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            for o in optimizers:
                o.step()
            for s in schedulers:
                s.step()
        loss.item()
        times.append((time.perf_counter() - start) * 1e3)
    return times[warmup:]


def bench_model(torch, npu, name, spec, warmup, steps, rounds, threads):
    """CPU PyTorch (with the faster of 1 and `threads` intra-op threads, chosen on a first short run) and the
    device, `rounds` rounds of `steps` steps each, the two alternating, so that a noisy neighbour slows both."""
    torch.manual_seed(0)
    model = spec[0]().train()
    batch = spec[1]()
    trial = {}
    for n in sorted({threads, 1}, reverse=True):
        torch.set_num_threads(n)
        trial[n] = statistics.median(step_times(torch, name, spec, copy.deepcopy(model), batch, warmup, steps))
    best = min(trial, key=trial.get)
    torch.set_num_threads(best)
    dev = npu.device()
    npu.reset_fallback_ops()
    cpu_model, dev_model = copy.deepcopy(model), copy.deepcopy(model).to(dev)
    dev_batch = tuple(t.to(dev) for t in batch)
    cpu, device = [], []
    for _ in range(rounds):
        cpu += step_times(torch, name, spec, cpu_model, batch, warmup, steps)
        device += step_times(torch, name, spec, dev_model, dev_batch, warmup, steps)
    torch.set_num_threads(threads)
    cpu_ms, device_ms = statistics.median(cpu), statistics.median(device)
    return {"cpu_ms": cpu_ms, "cpu_threads": best, "device_ms": device_ms, "ratio": device_ms / cpu_ms,
            "fallback_ops": npu.fallback_ops()}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps before each round (default 2)")
    parser.add_argument("--steps", type=int, default=7, help="timed steps per round (default 7)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per model, CPU and device alternating "
                                                              "(default 3)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="CPU PyTorch intra-op threads to try besides 1 (default nproc)")
    parser.add_argument("--models", default="", help="comma-separated subset of the models (default all)")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError as e:
        print(json.dumps({"available": False, "error": str(e)}))
        return 0
    try:
        import npuscope.torch as npu
    except (ImportError, OSError, RuntimeError) as e:  # not built, not on PYTHONPATH, or fails to load
        print(json.dumps({"available": False, "torch": torch.__version__, "error": str(e)}))
        return 0
    try:
        import torchvision
    except ImportError:
        torchvision = None
    npu.set_precision_mode("must_keep_origin_dtype")
    table = models(torch, torchvision)
    chosen = [m for m in args.models.split(",") if m] or sorted(table)
    result = {"available": True, "torch": torch.__version__, "warmup": args.warmup, "steps": args.steps,
              "rounds": args.rounds,
              "precision_mode": npu.get_precision_mode(), "load_avg": list(os.getloadavg()), "models": {}}
    for name in chosen:
        result["models"][name] = bench_model(torch, npu, name, table[name], args.warmup, args.steps, args.rounds,
                                             args.threads)
    ratios = [r["ratio"] for r in result["models"].values()]
    result["median_ratio"] = statistics.median(ratios)
    result["target_median_ratio"] = TARGET_MEDIAN_RATIO
    result["met"] = result["median_ratio"] <= TARGET_MEDIAN_RATIO
    result["load_avg_end"] = list(os.getloadavg())
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
