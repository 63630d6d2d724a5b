#!/usr/bin/python3
"""The model zoo bench: PyTorch's own CPU forward against the emulator's, model by model, side by side.

    model_zoo.py --zoo-exec BUILD/bench/zoo_exec [--out OUT_DIR] [--only NAME,...] [--min-time S]
                 [--rounds R] [--threads N] [--baseline-exec DIR/zoo_exec]

Each model (torchvision's, plus a GPT-style decoder, a U-Net and a 1-D audio CNN written here) gets
random weights from a fixed seed and a batch-1 input of the size a user would give it; it is
exported with torch.onnx.export to a temporary directory. Then, in one run, per model and round:
PyTorch's forward (eval, no_grad, after warm-up; the faster of nproc and 1 intra-op threads, as
bench/torch_resnet18.py measures it), and the emulator's execution of the exported model on `cpu`
and on `npu` with as many OpenMP threads for its BLAS as PyTorch's faster run used (bench/zoo_exec:
weights and inputs already on the device, one warm-up pass, then the median pass; process start-up
and model loading are not timed). The ratio is ours / PyTorch's. The
outputs are compared with PyTorch's (cosine similarity), so speed is never bought with wrong results.

A model whose export or whose ONNX ops the emulator does not run is reported as
"unsupported: <reason>" and the bench goes on. --baseline-exec times a second zoo_exec (an older
build's, copied into DIR beside its libnpuscope_emulator.so) right after ours on each device, so
that a change is measured before and after under the same load (columns "cpu_base_ms", "npu_base_ms"). Prints a table and writes OUT_DIR/model_zoo.json,
which bench/report.py renders into docs/PERFORMANCE.md. Needs python3-torch and
python3-torchvision; nothing is downloaded.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# ---- the models ----------------------------------------------------------------------------------
# Each entry: name -> (builder(torch) -> nn.Module, inputs(torch) -> tuple of tensors, ONNX opset).
# Recurrent models (LSTM/GRU) are in RECURRENT_MODELS, 3-D ones (Conv3d/pooling) in VOLUME_MODELS.


def tv(name, **kwargs):
    def build(torch):
        import torchvision
        return getattr(torchvision.models, name)(weights=None, **kwargs)
    return build


def image(size=224, channels=3):
    return lambda torch: (torch.randn(1, channels, size, size),)


def small_vit(torch):
    """ViT-S/16-sized (6 layers, width 384) from torchvision's VisionTransformer class."""
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=224, patch_size=16, num_layers=6, num_heads=6, hidden_dim=384, mlp_dim=1536)


def gpt(torch):
    """A small GPT-style decoder: token + position embeddings, 4 pre-norm causal blocks, tied head."""
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            self.heads = heads

        def forward(self, x, mask):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / (d // self.heads) ** 0.5) + mask
            y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self, vocab=4096, d=256, layers=4, heads=8, ctx=128):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
            self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
            self.ln = nn.LayerNorm(d)
            self.register_buffer("mask", torch.full((ctx, ctx), float("-inf")).triu(1))

        def forward(self, ids):
            t = ids.shape[1]
            x = self.tok(ids) + self.pos(torch.arange(t))
            for block in self.blocks:
                x = block(x, self.mask[:t, :t])
            return self.ln(x) @ self.tok.weight.t()

    return GPT()


def unet(torch):
    """A small 2-D U-Net (3 levels, base width 32): conv-BN-ReLU pairs, max-pool down, transposed-conv up."""
    nn = torch.nn

    def pair(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
                             nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self, w=32):
            super().__init__()
            self.d1, self.d2, self.mid = pair(3, w), pair(w, 2 * w), pair(2 * w, 4 * w)
            self.u2, self.c2 = nn.ConvTranspose2d(4 * w, 2 * w, 2, 2), pair(4 * w, 2 * w)
            self.u1, self.c1 = nn.ConvTranspose2d(2 * w, w, 2, 2), pair(2 * w, w)
            self.head, self.pool = nn.Conv2d(w, 2, 1), nn.MaxPool2d(2)

        def forward(self, x):
            a = self.d1(x)
            b = self.d2(self.pool(a))
            m = self.mid(self.pool(b))
            b = self.c2(torch.cat([self.u2(m), b], 1))
            return self.head(self.c1(torch.cat([self.u1(b), a], 1)))

    return UNet()


def audio_cnn(torch):
    """A 1-D keyword-spotting CNN (MatchboxNet-like): depthwise-separable Conv1d blocks on 64 mel bands."""
    nn = torch.nn

    def sep(cin, cout, k, dilation=1):
        return nn.Sequential(nn.Conv1d(cin, cin, k, padding=dilation * (k // 2), dilation=dilation, groups=cin),
                             nn.Conv1d(cin, cout, 1), nn.BatchNorm1d(cout), nn.ReLU())

    return nn.Sequential(nn.Conv1d(64, 128, 11, stride=2, padding=5), nn.BatchNorm1d(128), nn.ReLU(),
                         sep(128, 64, 13), sep(64, 64, 13), sep(64, 64, 15), sep(64, 64, 17), sep(64, 64, 29, 2),
                         sep(64, 128, 1), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(128, 35))


CNN_MODELS = {
    "resnet18": (tv("resnet18"), image(), 13),
    "resnet50": (tv("resnet50"), image(), 13),
    "mobilenet_v2": (tv("mobilenet_v2"), image(), 13),
    "mobilenet_v3_small": (tv("mobilenet_v3_small"), image(), 13),
    "mobilenet_v3_large": (tv("mobilenet_v3_large"), image(), 13),
    "efficientnet_b0": (tv("efficientnet_b0"), image(), 13),
    "mnasnet1_0": (tv("mnasnet1_0"), image(), 13),
    "shufflenet_v2_x1_0": (tv("shufflenet_v2_x1_0"), image(), 13),
    "squeezenet1_1": (tv("squeezenet1_1"), image(), 13),
    "densenet121": (tv("densenet121"), image(), 13),
    "regnet_y_400mf": (tv("regnet_y_400mf"), image(), 13),
    "convnext_tiny": (tv("convnext_tiny"), image(), 13),
    "googlenet": (tv("googlenet", aux_logits=False, init_weights=True), image(), 13),
    "vit_s16_6l": (small_vit, image(), 13),
    "swin_t": (tv("swin_t"), image(), 13),
}
OWN_MODELS = {
    "gpt_small": (gpt, lambda torch: (torch.randint(0, 4096, (1, 128)),), 13),
    "unet": (unet, image(128), 13),
    "audio_cnn_1d": (audio_cnn, lambda torch: (torch.randn(1, 64, 400),), 13),
}
# A model whose ONNX ops the emulator does not run is reported as "unsupported: <reason>".


def lstm_lm(torch):
    """An LSTM language model: embedding, 2-layer LSTM (width 256), vocabulary head."""
    nn = torch.nn

    class LstmLM(nn.Module):
        def __init__(self, vocab=4096, d=256):
            super().__init__()
            self.emb, self.lstm, self.head = nn.Embedding(vocab, d), nn.LSTM(d, d, 2, batch_first=True), nn.Linear(d, vocab)

        def forward(self, ids):
            return self.head(self.lstm(self.emb(ids))[0])

    return LstmLM()


def gru_classifier(torch):
    """A bidirectional GRU (width 128) over 80-dim frames, classifying from both directions' last states."""
    nn = torch.nn

    class GruClassifier(nn.Module):
        def __init__(self, features=80, d=128, classes=10):
            super().__init__()
            self.gru, self.head = nn.GRU(features, d, batch_first=True, bidirectional=True), nn.Linear(2 * d, classes)

        def forward(self, x):
            h = self.gru(x)[1]  # [2, batch, d]
            return self.head(torch.cat([h[0], h[1]], 1))

    return GruClassifier()


def r3d_18(torch):
    """torchvision's R3D-18 video classifier (3-D convolutions and pooling)."""
    import torchvision
    return torchvision.models.video.r3d_18(weights=None)


RECURRENT_MODELS = {
    "lstm_lm": (lstm_lm, lambda torch: (torch.randint(0, 4096, (1, 64)),), 13),
    "gru_classifier": (gru_classifier, lambda torch: (torch.randn(1, 100, 80),), 13),
}
VOLUME_MODELS = {
    "r3d_18": (r3d_18, lambda torch: (torch.randn(1, 3, 8, 64, 64),), 13),
}
MODELS = {**CNN_MODELS, **OWN_MODELS, **RECURRENT_MODELS, **VOLUME_MODELS}

# ---- timing --------------------------------------------------------------------------------------


def time_torch(torch, net, inputs, min_time, threads):
    """The median forward in ms at the faster of `threads` and 1 intra-op threads, and that thread count."""
    best = None
    for n in sorted({threads, 1}, reverse=True):
        torch.set_num_threads(n)
        with torch.no_grad():
            for _ in range(2):
                net(*inputs)
            times, start = [], time.perf_counter()
            while len(times) < 3 or (time.perf_counter() - start < min_time and len(times) < 200):
                t0 = time.perf_counter()
                net(*inputs)
                times.append((time.perf_counter() - t0) * 1e3)
        ms = statistics.median(times)
        if best is None or ms < best[0]:
            best = (ms, n)
    torch.set_num_threads(threads)
    return best


def run_ours(zoo_exec, model_path, input_files, device, min_time, out_dir, threads, baseline=False):
    """zoo_exec's JSON for one device with `threads` OpenMP (OpenBLAS) threads, or {"error": reason}."""
    cmd = [zoo_exec, model_path, "--device", device, "--min-time", str(min_time), "--output-dir", out_dir]
    for name, path in input_files.items():
        cmd += ["--input", "%s=%s" % (name, path)]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    if baseline:  # the older build's library beside its binary, ahead of the binary's RUNPATH
        env["LD_LIBRARY_PATH"] = os.path.dirname(os.path.abspath(zoo_exec))
    run = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if run.returncode != 0:
        lines = (run.stderr.strip() or "exit code %d" % run.returncode).splitlines()
        return {"error": lines[-1][:300]}
    return json.loads(run.stdout.strip().splitlines()[-1])


def cosine(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    if a.shape != b.shape:
        return float("nan")
    den = np.linalg.norm(a) * np.linalg.norm(b)
    return float(np.dot(a, b) / den) if den > 0 else float(np.array_equal(a, b))


def flatten(out):
    """A model's outputs in ONNX order: nested tuples (an LSTM's (y, (h, c))) flattened."""
    if isinstance(out, (tuple, list)):
        return [t for item in out for t in flatten(item)]
    return [out]


def output_cosines(expected, out_dir):
    got = [np.load(os.path.join(out_dir, "output_%d.npy" % i)) for i in range(len(expected))]
    return min(cosine(e, g) for e, g in zip(expected, got))


# ---- one model -----------------------------------------------------------------------------------


def export(torch, name, net, inputs, opset, tmp):
    path = os.path.join(tmp, name + ".onnx")
    names = ["input_%d" % i for i in range(len(inputs))]
    # Outside no_grad: in no_grad eval nn.MultiheadAttention takes a fused fast path ONNX cannot express.
    torch.onnx.export(net, inputs, path, input_names=names, opset_version=opset, do_constant_folding=True)
    files = {}
    for n, t in zip(names, inputs):
        files[n] = os.path.join(tmp, name + "." + n + ".npy")
        np.save(files[n], t.numpy())
    return path, files


def bench_model(torch, name, args, tmp):
    build, make_inputs, opset = MODELS[name]
    torch.manual_seed(0)
    net = build(torch).eval()
    inputs = make_inputs(torch)
    row = {"model": name, "params_m": round(sum(p.numel() for p in net.parameters()) / 1e6, 2)}
    try:
        path, files = export(torch, name, net, inputs, opset, tmp)
    except Exception as e:  # an op torch cannot export is the model's result, not the bench's failure
        row["unsupported"] = "export: %s" % str(e).strip().splitlines()[0][:200]
        return row
    with torch.no_grad():
        out = net(*inputs)
    expected = [t.numpy() for t in flatten(out)]
    rounds = {"torch": [], "cpu": [], "npu": []}
    if args.baseline_exec:
        rounds.update({"cpu_base": [], "npu_base": []})
    for _ in range(args.rounds):
        ms, row["torch_threads"] = time_torch(torch, net, inputs, args.min_time, args.threads)
        rounds["torch"].append(ms)
        for device in ("cpu", "npu"):
            out_dir = os.path.join(tmp, name + "." + device)
            res = run_ours(args.zoo_exec, path, files, device, args.min_time, out_dir, row["torch_threads"])
            if "error" in res:
                row["unsupported"] = "%s: %s" % (device, res["error"])
                return row
            rounds[device].append(res["median_ms"])
            row["nodes"] = res["nodes"]
            row["cos_" + device] = output_cosines(expected, out_dir)
            if args.baseline_exec:
                base = run_ours(args.baseline_exec, path, files, device, args.min_time, out_dir + ".base",
                                row["torch_threads"], baseline=True)
                rounds[device + "_base"].append(base.get("median_ms", float("nan")))
    for key, values in rounds.items():
        row[key + "_ms"] = statistics.median(values)
    row["cpu_ratio"] = row["cpu_ms"] / row["torch_ms"]
    row["npu_ratio"] = row["npu_ms"] / row["torch_ms"]
    if args.baseline_exec:
        row["cpu_base_ratio"] = row["cpu_base_ms"] / row["torch_ms"]
        row["npu_base_ratio"] = row["npu_base_ms"] / row["torch_ms"]
    return row


def summary(rows):
    done = [r for r in rows if "unsupported" not in r]
    out = {"models": len(rows), "measured": len(done)}
    for dev in ("cpu", "npu"):
        ratios = [r[dev + "_ratio"] for r in done]
        if ratios:
            worst = max(done, key=lambda r: r[dev + "_ratio"])
            out[dev] = {"median_ratio": statistics.median(ratios), "worst_ratio": worst[dev + "_ratio"],
                        "worst_model": worst["model"]}
    return out


def print_row(r):
    if "unsupported" in r:
        print("%-20s unsupported: %s" % (r["model"], r["unsupported"]), flush=True)
        return
    base = ""
    if "cpu_base_ratio" in r:
        base = "   (before: %.2fx %.2fx)" % (r["cpu_base_ratio"], r["npu_base_ratio"])
    print("%-20s %9.2f %9.2f %9.2f %7.2fx %7.2fx %9.6f %9.6f%s" % (
        r["model"], r["torch_ms"], r["cpu_ms"], r["npu_ms"], r["cpu_ratio"], r["npu_ratio"], r["cos_cpu"],
        r["cos_npu"], base), flush=True)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo-exec", required=True, help="the zoo_exec binary (build/bench/zoo_exec)")
    parser.add_argument("--out", help="directory for model_zoo.json")
    parser.add_argument("--only", help="comma-separated model names (default: all): " + ", ".join(MODELS))
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds of timed passes per measurement")
    parser.add_argument("--rounds", type=int, default=1, help="torch/cpu/npu rounds per model (median taken)")
    parser.add_argument("--baseline-exec", help="an older build's zoo_exec, copied beside its libnpuscope_emulator.so: "
                        "timed after ours on each device (before/after under the same load)")
    parser.add_argument("--baseline-label", default="an older build",
                        help="what the baseline is, for the report (e.g. a commit)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="PyTorch intra-op threads besides 1 (default nproc, as OpenBLAS uses)")
    args = parser.parse_args(argv)
    try:
        import torch
        import torchvision  # noqa: F401 (the CNNs)
    except ImportError as e:
        print(json.dumps({"available": False, "error": str(e)}))
        return 0
    names = args.only.split(",") if args.only else list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        raise SystemExit("model_zoo.py: unknown model(s) %s; known: %s" % (unknown, ", ".join(MODELS)))
    print("%-20s %9s %9s %9s %8s %8s %9s %9s" % ("model", "torch ms", "cpu ms", "npu ms", "cpu/pt", "npu/pt",
                                                "cos cpu", "cos npu"), flush=True)
    rows, start = [], time.time()
    with tempfile.TemporaryDirectory(prefix="model_zoo.") as tmp:
        for name in names:
            rows.append(bench_model(torch, name, args, tmp))
            print_row(rows[-1])
    result = {"available": True, "torch": torch.__version__, "nproc": len(os.sched_getaffinity(0)),
              "min_time_s": args.min_time, "rounds": args.rounds,
              "baseline": args.baseline_label if args.baseline_exec else None,
              "seconds": round(time.time() - start, 1),
              "load_avg": list(os.getloadavg()), "rows": rows, "summary": summary(rows)}
    print(json.dumps(result["summary"]))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "model_zoo.json"), "w") as f:
            json.dump(result, f)  # one line: report.py reads the last line
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
