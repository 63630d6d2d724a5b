#!/usr/bin/python3
"""Writes a ResNet-18 (torchvision's topology) as an ONNX model with seeded random weights.

    make_resnet18.py OUT.onnx [--seed S] [--image 224]

Graph (opset 13): conv1 7x7/2 64 + BN + Relu + MaxPool 3x3/2, four stages of two BasicBlocks
(64, 128, 256, 512 channels; stages 2-4 open with a stride-2 block whose shortcut is a 1x1/2
conv + BN), GlobalAveragePool, Flatten, Gemm 512 -> 1000. Input "input" float32 [N, 3, H, H] with a
symbolic batch "N" (H = --image), output "logits" float32 [N, 1000].

Weights layout: every initializer is named after the key of torchvision's `resnet18().state_dict()`
("conv1.weight", "layer2.0.downsample.1.running_var", "fc.bias", ...) and has the same shape and
layout (conv OIHW; fc.weight [1000, 512], used by Gemm with transB=1), so a PyTorch ResNet-18 loads
them with `load_state_dict({name: numpy_helper.to_array(init)})` (bench/torch_resnet18.py does).
BatchNorm uses PyTorch's epsilon, 1e-5. The same layout note is stored in the model's
metadata_props ("weights_layout").

Weights: convs He-initialised like torchvision (normal, std = sqrt(2 / fan_out)); BatchNorm near
identity (gamma ~ U[0.9, 1.1], beta ~ U[-0.05, 0.05], running mean ~ N(0, 0.05), running var ~
U[0.9, 1.1]); fc like nn.Linear (U[-1/sqrt(512), 1/sqrt(512)]). Nodes are named after the PyTorch
modules ("layer1.0.conv1", "layer1.0.bn1", "layer1.0.add", ...) so NPU and CPU runs match op by op.
Needs only onnx and numpy; the same seed always gives the same file.
"""
import argparse
import sys

import numpy as np
from model_file import GraphBuilder, save_checked
from onnx import helper

OPSET = 13
BN_EPSILON = 1e-5
STAGES = (64, 128, 256, 512)
NUM_CLASSES = 1000
WEIGHTS_LAYOUT = ("torchvision resnet18 state_dict: initializer names are the state_dict keys, same shapes; "
                  "conv OIHW; fc.weight [out, in] (Gemm transB=1); BatchNorm epsilon 1e-5")


class Builder(GraphBuilder):
    """Collects nodes and initializers; names follow torchvision's module names."""

    def conv(self, name, x, c_in, c_out, k, stride, pad):
        fan_out = c_out * k * k
        w = self.rng.normal(0.0, np.sqrt(2.0 / fan_out), size=(c_out, c_in, k, k))
        self.nodes.append(helper.make_node(
            "Conv", [x, self.param(name + ".weight", w)], [name], name=name,
            kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, dilations=[1, 1], group=1))
        return name

    def bn(self, name, x, c):
        r = self.rng
        names = [self.param(name + ".weight", r.uniform(0.9, 1.1, c)),
                 self.param(name + ".bias", r.uniform(-0.05, 0.05, c)),
                 self.param(name + ".running_mean", r.normal(0.0, 0.05, c)),
                 self.param(name + ".running_var", r.uniform(0.9, 1.1, c))]
        self.nodes.append(helper.make_node("BatchNormalization", [x] + names, [name], name=name,
                                           epsilon=BN_EPSILON, momentum=0.9))
        return name

    def op(self, op_type, name, inputs, **attrs):
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, **attrs))
        return name

    def basic_block(self, prefix, x, c_in, c_out, stride):
        y = self.conv(prefix + ".conv1", x, c_in, c_out, 3, stride, 1)
        y = self.bn(prefix + ".bn1", y, c_out)
        y = self.op("Relu", prefix + ".relu1", [y])
        y = self.conv(prefix + ".conv2", y, c_out, c_out, 3, 1, 1)
        y = self.bn(prefix + ".bn2", y, c_out)
        shortcut = x
        if stride != 1 or c_in != c_out:
            shortcut = self.conv(prefix + ".downsample.0", x, c_in, c_out, 1, stride, 0)
            shortcut = self.bn(prefix + ".downsample.1", shortcut, c_out)
        y = self.op("Add", prefix + ".add", [y, shortcut])
        return self.op("Relu", prefix + ".relu2", [y])


def build_model(seed, image):
    b = Builder(seed)
    x = b.conv("conv1", "input", 3, 64, 7, 2, 3)
    x = b.bn("bn1", x, 64)
    x = b.op("Relu", "relu", [x])
    x = b.op("MaxPool", "maxpool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c_in = 64
    for stage, c_out in enumerate(STAGES, start=1):
        for block in range(2):
            stride = 2 if stage > 1 and block == 0 else 1
            x = b.basic_block("layer%d.%d" % (stage, block), x, c_in, c_out, stride)
            c_in = c_out
    x = b.op("GlobalAveragePool", "avgpool", [x])
    x = b.op("Flatten", "flatten", [x], axis=1)
    fc_bound = 1.0 / np.sqrt(c_in)
    w = b.param("fc.weight", b.rng.uniform(-fc_bound, fc_bound, (NUM_CLASSES, c_in)))
    bias = b.param("fc.bias", b.rng.uniform(-fc_bound, fc_bound, NUM_CLASSES))
    b.nodes.append(helper.make_node("Gemm", [x, w, bias], ["logits"], name="fc", alpha=1.0, beta=1.0, transB=1))

    return b.model("resnet18", ["N", 3, image, image], ["N", NUM_CLASSES], OPSET, "npuscope make_resnet18.py",
                   {"weights_layout": WEIGHTS_LAYOUT, "seed": str(seed)})


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="where to write the .onnx file")
    parser.add_argument("--seed", type=int, default=0, help="weights seed (default 0)")
    parser.add_argument("--image", type=int, default=224, help="input height = width (default 224, >= 32)")
    args = parser.parse_args(argv)
    if args.image < 32:
        parser.error("--image must be >= 32 (the network downsamples by 32), got %d" % args.image)
    model = build_model(args.seed, args.image)
    save_checked(model, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
