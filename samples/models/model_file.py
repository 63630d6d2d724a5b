"""Writing a generated ONNX model: shared by the make_*.py scripts."""
import os

import onnx


def save_checked(model, path):
    """Checks `model` and writes it to `path` atomically (an interrupted build never leaves half a model)."""
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(model.SerializeToString())
    os.replace(tmp, path)
