"""Writes two msprobe tensor-mode dumps of one tiny model, as msprobe's PyTorch dump lays them out,
for tests/cli/compare_dumps_command_test.cpp: OUT_DIR/bench/step0/rank0/ (the model as built) and
OUT_DIR/npu/step0/rank0/ (the same model and input, one weight of fc2 perturbed).

    /usr/bin/python3 write_msprobe_tensor_dumps.py OUT_DIR

Each has dump.json (task tensor, level mix: the L1 API entries Functional.linear / Functional.relu
with their inputs, keyword inputs and outputs, the L0 module entry of fc2 with its parameters, and
the backward entries of the two linears), stack.json, construct.json, and dump_tensor_data/ with
one torch.save file per tensor, named as msprobe names them ("Functional.linear.1.forward.input.0.pt")
and saved as msprobe saves them (clone().contiguous()). Exits 3 when torch cannot be imported.
"""
import json
import os
import sys

try:
    import torch
except ImportError:
    sys.exit(3)


class Dump:
    def __init__(self, folder):
        self.folder = folder
        self.data_dir = os.path.join(folder, "dump_tensor_data")
        os.makedirs(self.data_dir, exist_ok=True)
        self.data = {}

    def tensor(self, name, t):
        t = t.detach()
        file = name + ".pt"
        torch.save(t.clone().contiguous(), os.path.join(self.data_dir, file))
        f = t.float()
        return {"type": "torch.Tensor", "dtype": str(t.dtype), "shape": list(t.shape), "Max": f.max().item(),
                "Min": f.min().item(), "Mean": f.mean().item(), "Norm": f.norm().item(),
                "requires_grad": t.requires_grad, "data_name": file}

    def api(self, entry, args, kwargs, outputs):
        self.data[entry] = {
            "input_args": [self.tensor(f"{entry}.input.{i}", a) if torch.is_tensor(a) else a
                           for i, a in enumerate(args)],
            "input_kwargs": {k: v for k, v in kwargs.items()},
            "output": [self.tensor(f"{entry}.output.{i}", o) for i, o in enumerate(outputs)]}

    def backward(self, entry, grads_in, grads_out):
        self.data[entry] = {
            "input": [self.tensor(f"{entry}.input.{i}", g) for i, g in enumerate(grads_in)],
            "output": [self.tensor(f"{entry}.output.{i}", g) if g is not None else None
                       for i, g in enumerate(grads_out)]}

    def write(self):
        with open(os.path.join(self.folder, "dump.json"), "w") as f:
            json.dump({"task": "tensor", "level": "mix", "framework": "pytorch", "dump_data_dir": self.data_dir,
                       "data": self.data}, f, indent=1)
        stack = {"0": [[name for name in self.data if name.startswith("Functional.")],
                       ['File "/work/tiny_model.py", line 12, in forward, \n x = F.linear(x, w)']]}
        with open(os.path.join(self.folder, "stack.json"), "w") as f:
            json.dump(stack, f)
        construct = {name: "Module.fc2.Linear.forward.0" if "linear.1.forward" in name else None
                     for name in self.data}
        with open(os.path.join(self.folder, "construct.json"), "w") as f:
            json.dump(construct, f)


def run(folder, perturb):
    torch.manual_seed(38)
    w1 = torch.randn(16, 8, requires_grad=True)
    b1 = torch.randn(16, requires_grad=True)
    w2 = torch.randn(4, 16)
    if perturb:
        w2[1, 3] += 0.5
    w2.requires_grad_(True)
    x = torch.randn(5, 8)
    d = Dump(folder)
    h = torch.nn.functional.linear(x, w1, b1)
    d.api("Functional.linear.0.forward", [x, w1, b1], {}, [h])
    r = torch.nn.functional.relu(h)
    d.api("Functional.relu.0.forward", [h], {"inplace": {"type": "bool", "value": False}}, [r])
    y = torch.nn.functional.linear(r, w2)
    d.api("Functional.linear.1.forward", [r, w2, None], {}, [y])
    d.data["Module.fc2.Linear.forward.0"] = {
        "input_args": [d.tensor("Module.fc2.Linear.forward.0.input.0", r)], "input_kwargs": {},
        "output": [d.tensor("Module.fc2.Linear.forward.0.output.0", y)],
        "parameters": {"weight": d.tensor("Module.fc2.Linear.forward.0.parameters.weight", w2)}}
    gy = torch.ones_like(y)
    gr, gw2 = torch.autograd.grad(y, [r, w2], gy, retain_graph=True)
    d.backward("Functional.linear.1.backward", [gy], [gr, gw2, None])
    gh = gr * (h > 0)
    d.backward("Functional.relu.0.backward", [gr], [gh])
    gw1, gb1 = torch.autograd.grad(h, [w1, b1], gh)
    d.backward("Functional.linear.0.backward", [gh], [None, gw1, gb1])
    d.write()


out = sys.argv[1]
run(os.path.join(out, "bench", "step0", "rank0"), False)
run(os.path.join(out, "npu", "step0", "rank0"), True)
