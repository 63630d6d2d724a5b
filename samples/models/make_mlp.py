#!/usr/bin/python3
"""Writes a small, deep residual MLP as an ONNX model with seeded random weights.

    make_mlp.py OUT.onnx [--seed S] [--blocks 8] [--hidden 64] [--batch 8]

A model for accuracy tooling rather than speed: many ops in a chain, each cheap, so that a fault
injected into one of them (`npuscope exec --perturb`) has a long way to travel and a comparison
has a first failing op to find. It runs in milliseconds on both `--device cpu` and `--device npu`.

Graph (opset 17): input "input" float32 [batch, hidden]; then --blocks blocks, block i being

    block<i>.matmul    MatMul(h, block<i>.weight [hidden, hidden])
    block<i>.add       Add(., block<i>.bias)
    block<i>.relu      Relu
    block<i>.residual  Add(., h)
    block<i>.norm      LayerNormalization(., block<i>.norm.weight, block<i>.norm.bias), axis -1, eps 1e-5

and a head: "head.matmul" MatMul(h, head.weight [hidden, 16]), "head.add" Add(., head.bias), giving
output "logits" float32 [batch, 16]. Every node is named (names above), so NPU and CPU runs match
op by op. Only ops the emulated NPU runs natively in f32 (no Gelu: its NPU form is an approximation),
so under must_keep_origin_dtype the NPU and CPU golden results agree to f32 rounding and a
perturbation is the only error source.

Weights: MatMuls He-initialised (normal, std = sqrt(2 / fan_in)), biases U[-0.1, 0.1], LayerNorm
gamma U[0.9, 1.1] and beta U[-0.05, 0.05]. Needs only onnx and numpy; the same seed always gives the
same file.
"""
import argparse
import sys

import numpy as np
from model_file import GraphBuilder, save_checked
from onnx import helper

OPSET = 17  # LayerNormalization
LN_EPSILON = 1e-5
NUM_OUTPUTS = 16


class Builder(GraphBuilder):
    """Collects named nodes and initializers."""

    def op(self, op_type, name, inputs, **attrs):
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, **attrs))
        return name

    def linear(self, prefix, x, n_in, n_out):
        r = self.rng
        w = self.param(prefix + ".weight", r.normal(0.0, np.sqrt(2.0 / n_in), (n_in, n_out)))
        b = self.param(prefix + ".bias", r.uniform(-0.1, 0.1, n_out))
        y = self.op("MatMul", prefix + ".matmul", [x, w])
        return self.op("Add", prefix + ".add", [y, b])

    def block(self, prefix, x, hidden):
        y = self.linear(prefix, x, hidden, hidden)
        y = self.op("Relu", prefix + ".relu", [y])
        y = self.op("Add", prefix + ".residual", [y, x])
        r = self.rng
        gamma = self.param(prefix + ".norm.weight", r.uniform(0.9, 1.1, hidden))
        beta = self.param(prefix + ".norm.bias", r.uniform(-0.05, 0.05, hidden))
        return self.op("LayerNormalization", prefix + ".norm", [y, gamma, beta], axis=-1, epsilon=LN_EPSILON)


def build_model(seed, blocks, hidden, batch):
    b = Builder(seed)
    x = "input"
    for i in range(blocks):
        x = b.block("block%d" % i, x, hidden)
    w = b.param("head.weight", b.rng.normal(0.0, np.sqrt(1.0 / hidden), (hidden, NUM_OUTPUTS)))
    bias = b.param("head.bias", b.rng.uniform(-0.1, 0.1, NUM_OUTPUTS))
    y = b.op("MatMul", "head.matmul", [x, w])
    b.nodes.append(helper.make_node("Add", [y, bias], ["logits"], name="head.add"))

    return b.model("mlp", [batch, hidden], [batch, NUM_OUTPUTS], OPSET, "npuscope make_mlp.py",
                   {"seed": str(seed), "blocks": str(blocks), "hidden": str(hidden)})


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="where to write the .onnx file")
    parser.add_argument("--seed", type=int, default=0, help="weights seed (default 0)")
    parser.add_argument("--blocks", type=int, default=8, help="residual blocks (default 8)")
    parser.add_argument("--hidden", type=int, default=64, help="hidden size (default 64)")
    parser.add_argument("--batch", type=int, default=8, help="rows of the input (default 8)")
    args = parser.parse_args(argv)
    for name in ("blocks", "hidden", "batch"):
        if getattr(args, name) < 1:
            parser.error("--%s must be >= 1, got %d" % (name, getattr(args, name)))
    model = build_model(args.seed, args.blocks, args.hidden, args.batch)
    save_checked(model, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
