"""Recurrent models exported to ONNX for the emulator: an LSTM language model (embedding, 2-layer LSTM,
linear), a GRU classifier (bidirectional GRU, linear over the last states) and a small ReLU RNN
tagger. torch.onnx.export (opset 9 and later) writes nn.LSTM / nn.GRU / nn.RNN as ONNX LSTM / GRU /
RNN nodes (one per layer); the LSTM model takes its initial states as inputs, the GRU classifier its
sequence lengths (a packed sequence, which the exporter turns into the GRU's sequence_lens), and the
tagger's RNN node names its activation (activations = ["Relu"]).

    /usr/bin/python3 samples/pytorch/recurrent_models.py --out-dir /tmp/rnn
    npuscope exec --model /tmp/rnn/lstm_lm.onnx --input tokens=/tmp/rnn/lstm_lm_tokens.npy \\
        --input h0=/tmp/rnn/lstm_lm_h0.npy --input c0=/tmp/rnn/lstm_lm_c0.npy --device npu \\
        --output-dir /tmp/rnn/lstm_lm_outputs

Everything goes under --out-dir (a new temporary directory by default), the outputs of the printed
exec lines too: run from the source tree, exec's default output directory (exec_<model>/ in the
current directory) would land in it.
"""
import argparse
import os
import tempfile

import numpy as np
import torch
from torch import nn

VOCAB, EMBED, HIDDEN, LAYERS = 50, 16, 32, 2
FEATURES, CLASSES = 12, 5
SEQ, BATCH = 7, 3


class LstmLanguageModel(nn.Module):
    """Next-token logits for every position: [B, T] tokens -> [B, T, VOCAB]."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.lstm = nn.LSTM(EMBED, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, tokens, h0, c0):
        y, (h, c) = self.lstm(self.embed(tokens), (h0, c0))
        return self.head(y), h, c


class GruClassifier(nn.Module):
    """Class logits from the last states of both directions: [T, B, F] and lengths [B] -> [B, CLASSES]."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(FEATURES, HIDDEN, bidirectional=True)
        self.head = nn.Linear(2 * HIDDEN, CLASSES)

    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
        _, h = self.gru(packed)  # [2, B, H]: each direction's state at its sequence's end
        return self.head(torch.cat([h[0], h[1]], dim=1))


def lstm_lm():
    """The model (seed 0) and its example inputs (seed 1)."""
    torch.manual_seed(0)
    model = LstmLanguageModel().eval()
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)
    h0 = 0.1 * torch.randn(LAYERS, BATCH, HIDDEN, generator=g)
    c0 = 0.1 * torch.randn(LAYERS, BATCH, HIDDEN, generator=g)
    return model, {"tokens": tokens, "h0": h0, "c0": c0}, ["logits", "h", "c"]


def gru_classifier():
    """The model (seed 0) and its example inputs (seed 2): sequences of lengths 7, 4 and 2."""
    torch.manual_seed(0)
    model = GruClassifier().eval()
    g = torch.Generator().manual_seed(2)
    x = torch.randn(SEQ, BATCH, FEATURES, generator=g)
    lengths = torch.tensor([SEQ, 4, 2], dtype=torch.int64)
    return model, {"x": x, "lengths": lengths}, ["logits"]


class RnnTagger(nn.Module):
    """Per-step tags from a ReLU RNN, batch first: [B, T, F] -> [B, T, CLASSES]."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(FEATURES, HIDDEN, nonlinearity="relu", batch_first=True)
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):
        return self.head(self.rnn(x)[0])


def rnn_tagger():
    """The model (seed 0) and its example input (seed 3)."""
    torch.manual_seed(0)
    model = RnnTagger().eval()
    x = torch.randn(BATCH, SEQ, FEATURES, generator=torch.Generator().manual_seed(3))
    return model, {"x": x}, ["tags"]


MODELS = {"lstm_lm": lstm_lm, "gru_classifier": gru_classifier, "rnn_tagger": rnn_tagger}


def export(name, out_dir, opset=14):
    """Writes NAME.onnx, NAME_<input>.npy and PyTorch's outputs NAME_expected_<i>.npy; returns the paths."""
    model, inputs, output_names = MODELS[name]()
    path = os.path.join(out_dir, name + ".onnx")
    with torch.no_grad():
        expected = model(*inputs.values())
        torch.onnx.export(model, tuple(inputs.values()), path, input_names=list(inputs), output_names=output_names,
                          opset_version=opset)
    expected = expected if isinstance(expected, tuple) else (expected,)
    files = {}
    for k, v in inputs.items():
        files[k] = os.path.join(out_dir, f"{name}_{k}.npy")
        np.save(files[k], v.numpy())
    for i, e in enumerate(expected):
        np.save(os.path.join(out_dir, f"{name}_expected_{i}.npy"), e.numpy())
    return path, files, [e.numpy() for e in expected]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", help="where the models, inputs and outputs go (default: a new temporary directory)")
    parser.add_argument("--opset", type=int, default=14)
    args = parser.parse_args()
    out_dir = args.out_dir or tempfile.mkdtemp(prefix="npuscope_recurrent_models_")
    os.makedirs(out_dir, exist_ok=True)
    for name in MODELS:
        path, files, _ = export(name, out_dir, args.opset)
        inputs = " ".join(f"--input {k}={f}" for k, f in files.items())
        outputs = os.path.join(out_dir, name + "_outputs")
        print(f"{path}: npuscope exec --model {path} {inputs} --device npu --output-dir {outputs}")


if __name__ == "__main__":
    main()
