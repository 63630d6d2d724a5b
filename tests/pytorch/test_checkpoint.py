"""Checkpoints of device tensors (Note [Checkpoints of device tensors], npuscope/_serialization.py): torch.save /
torch.load of a trained model and its optimizer, map_location to the CPU and to the device, torch_npu's location
tags, storage sharing, copy.deepcopy and pickle."""
import copy
import io
import pickle
import unittest
import zipfile

import torch

import npuscope.torch as npu
from npuscope import _serialization
from npu_test_util import DEV, DeviceTestCase


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                               torch.nn.Flatten(), torch.nn.Linear(8 * 8 * 8, 10))


def _batch(i):
    g = torch.Generator().manual_seed(100 + i)
    return torch.randn(4, 3, 8, 8, generator=g).to(DEV), torch.randint(0, 10, (4,), generator=g).to(DEV)


def _train(model, opt, steps, first=0):
    losses = []
    for i in range(first, first + steps):
        x, y = _batch(i)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _saved(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


def _locations(buf):
    """The location tags of the storages in a checkpoint, as torch.load sees them."""
    seen = []

    def record(storage, location):
        seen.append(location)
        return storage
    torch.load(buf, map_location=record)
    buf.seek(0)
    return seen


class CheckpointTest(DeviceTestCase):
    def test_trained_model_and_optimizer_round_trip_and_train_on_identically(self):
        model = _model().to(DEV)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        _train(model, opt, 3)
        buf = _saved({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3})

        ckpt = torch.load(buf)
        self.assertEqual(ckpt["epoch"], 3)
        for name, value in model.state_dict().items():
            self.assertEqual(ckpt["model"][name].device, DEV, name)
            self.assertTrue(torch.equal(ckpt["model"][name].cpu(), value.cpu()), name)
        exp_avg = next(iter(ckpt["optimizer"]["state"].values()))["exp_avg"]
        self.assertEqual(exp_avg.device, DEV)

        resumed = _model().to(DEV)
        resumed.load_state_dict(ckpt["model"])
        resumed_opt = torch.optim.Adam(resumed.parameters(), lr=1e-2)
        resumed_opt.load_state_dict(ckpt["optimizer"])
        self.assertEqual(_train(resumed, resumed_opt, 2, first=3), _train(model, opt, 2, first=3))
        for a, b in zip(resumed.parameters(), model.parameters()):
            self.assertTrue(torch.equal(a.cpu(), b.cpu()))
        self.assertEqual(npu.fallback_ops(), {})

    def test_location_tags_are_torch_npus(self):
        buf = _saved([torch.ones(3).to(DEV), torch.ones(2)])
        self.assertEqual(sorted(_locations(buf)), ["cpu", "npu:0"])

    def test_map_location_to_the_cpu_and_to_the_device(self):
        t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        on_cpu = torch.load(_saved(t.to(DEV)), map_location="cpu")
        self.assertEqual(on_cpu.device.type, "cpu")
        self.assertTrue(torch.equal(on_cpu, t))
        for where in (npu.device(), "npu:0", "npu", "privateuseone:0", {"cpu": "npu:0"}):
            moved = torch.load(_saved(t), map_location=where)
            self.assertEqual(moved.device, DEV, where)
            self.assertTrue(torch.equal(moved.cpu(), t), where)
        kept = torch.load(_saved(t.to(DEV)), map_location=lambda storage, location: storage)
        self.assertEqual(kept.device.type, "cpu")  # a function returning the storage keeps it on the host, as for CUDA

    def test_a_privateuseone_tag_loads_too(self):
        storage = torch.arange(4, dtype=torch.uint8).storage().untyped()
        self.assertIsNone(_serialization._restore(storage, "cuda:0"))
        self.assertIs(_serialization._restore(storage, "privateuseone:0"), storage)
        rebuilt = torch._utils._rebuild_tensor_v2(torch.storage.TypedStorage(wrap_storage=storage, dtype=torch.uint8),
                                                  1, (3,), (1,), False, {})
        self.assertEqual(rebuilt.device, DEV)
        self.assertEqual(rebuilt.cpu().tolist(), [1, 2, 3])

    def test_dtypes_views_and_nested_containers(self):
        base = torch.randn(4, 6)
        values = {
            "half": [torch.randn(5).half().to(DEV), (torch.randn(3).bfloat16().to(DEV),)],
            "ints": {"i64": torch.arange(7).to(DEV), "mask": (torch.arange(5) > 2).to(DEV)},
            "transposed": base.to(DEV).t(),
            "narrow": base.to(DEV)[1:3, 2:],
        }
        loaded = torch.load(_saved(values))
        self.assertTrue(torch.equal(loaded["half"][0].cpu(), values["half"][0].cpu()))
        self.assertEqual(loaded["half"][1][0].dtype, torch.bfloat16)
        self.assertTrue(torch.equal(loaded["half"][1][0].cpu(), values["half"][1][0].cpu()))
        self.assertTrue(torch.equal(loaded["ints"]["i64"].cpu(), torch.arange(7)))
        self.assertEqual(loaded["ints"]["mask"].dtype, torch.bool)
        self.assertEqual(loaded["transposed"].stride(), (1, 6))
        self.assertTrue(torch.equal(loaded["transposed"].cpu(), base.t()))
        self.assertTrue(torch.equal(loaded["narrow"].cpu(), base[1:3, 2:]))

    def test_views_of_one_storage_still_share_it(self):
        base = torch.zeros(6).to(DEV)
        loaded = torch.load(_saved({"all": base, "tail": base[3:]}))
        loaded["tail"].fill_(5.0)
        self.assertEqual(loaded["all"].cpu().tolist(), [0, 0, 0, 5, 5, 5])

    def test_a_device_index_beyond_the_devices_is_an_error_naming_map_location(self):
        storage = torch.arange(4, dtype=torch.uint8).storage().untyped()
        with self.assertRaisesRegex(RuntimeError, "map_location"):
            _serialization._restore(storage, "npu:%d" % npu.device_count())

    def test_the_file_is_pytorchs_zip_format(self):
        buf = _saved(torch.ones(2).to(DEV))
        names = zipfile.ZipFile(buf).namelist()
        self.assertTrue(any(n.endswith("data.pkl") for n in names), names)


class CopyAndPickleTest(DeviceTestCase):
    def test_deepcopy_of_a_tensor_and_a_module(self):
        t = torch.randn(3, 4).to(DEV).requires_grad_()
        c = copy.deepcopy(t)
        self.assertEqual(c.device, DEV)
        self.assertTrue(c.requires_grad)
        self.assertNotEqual(c.data_ptr(), t.data_ptr())
        self.assertTrue(torch.equal(c.detach().cpu(), t.detach().cpu()))

        model = _model().to(DEV)
        twin = copy.deepcopy(model)
        for (name, a), b in zip(model.state_dict().items(), twin.state_dict().values()):
            self.assertEqual(b.device, DEV, name)
            self.assertTrue(torch.equal(a.cpu(), b.cpu()), name)
        with torch.no_grad():
            next(twin.parameters()).add_(1.0)
        self.assertFalse(torch.equal(next(twin.parameters()).cpu(), next(model.parameters()).cpu()))

    def test_pickle_round_trip(self):
        t = torch.randn(5, 2).to(DEV)
        back = pickle.loads(pickle.dumps({"t": t, "view": t[1:]}))
        self.assertEqual(back["t"].device, DEV)
        self.assertTrue(torch.equal(back["t"].cpu(), t.cpu()))
        self.assertTrue(torch.equal(back["view"].cpu(), t[1:].cpu()))

    def test_set_takes_another_device_tensors_storage(self):
        a, b = torch.zeros(3).to(DEV), torch.arange(6.0).to(DEV)
        a.set_(b)
        self.assertEqual(a.cpu().tolist(), [0, 1, 2, 3, 4, 5])
        a.set_(b, 2, (2, 2), (1, 2))
        self.assertEqual(a.cpu().tolist(), [[2, 4], [3, 5]])
        b.add_(1)
        self.assertEqual(a.cpu().tolist(), [[3, 5], [4, 6]])
        a.set_()
        self.assertEqual(a.numel(), 0)

    def test_legacy_format(self):
        buf = io.BytesIO()
        t = torch.randn(3, 4).to(DEV)
        torch.save({"t": t, "row": t[1]}, buf, _use_new_zipfile_serialization=False)
        buf.seek(0)
        back = torch.load(buf)
        self.assertEqual(back["t"].device, DEV)
        self.assertTrue(torch.equal(back["t"].cpu(), t.cpu()))
        back["row"].zero_()
        self.assertEqual(back["t"][1].abs().sum().item(), 0.0)


if __name__ == "__main__":
    unittest.main()
