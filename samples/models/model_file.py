"""What the make_*.py model generators share: collecting a graph, and writing it."""
import os

import numpy as np
import onnx
from onnx import numpy_helper


class GraphBuilder:
    """Collects named nodes and float32 initializers; `rng` draws the seeded weights."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def param(self, name, array):
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), name))
        return name


def save_checked(model, path):
    """Checks `model` and writes it to `path` atomically (an interrupted build never leaves half a model)."""
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(model.SerializeToString())
    os.replace(tmp, path)
