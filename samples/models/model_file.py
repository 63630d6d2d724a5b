"""What the make_*.py model generators share: collecting a graph, and writing it."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class GraphBuilder:
    """Collects named nodes and float32 initializers; `rng` draws the seeded weights."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def param(self, name, array):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), name))
        return name

    def model(self, name, input_shape, output_shape, opset, producer, props):
        """The graph `name` (float32 "input" -> "logits") as an ONNX model of `opset` with metadata `props`.
        IR version 8: readable by onnx >= 1.10."""
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, input_shape)],
            [helper.make_tensor_value_info("logits", TensorProto.FLOAT, output_shape)],
            initializer=self.inits)
        model = helper.make_model(graph, producer_name=producer, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        helper.set_model_props(model, props)
        return model


def save_checked(model, path):
    """Checks `model` and writes it to `path` atomically (an interrupted build never leaves half a model)."""
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(model.SerializeToString())
    os.replace(tmp, path)
