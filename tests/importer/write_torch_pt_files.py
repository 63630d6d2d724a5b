"""Writes the torch.save files torch_pt_file_test reads, with what they hold, into OUT_DIR.

    /usr/bin/python3 write_torch_pt_files.py OUT_DIR

OUT_DIR/manifest.txt has one line per file:
    ok    FILE DTYPE SHAPE RAW    FILE must read as a DTYPE tensor (npuscope's name) of SHAPE
                                  ("3x5", "-" for 0-d), its elements in C order the bytes of RAW
    error FILE TEXT               reading FILE must fail with a message containing TEXT (spaces as _)
Exits 3 when torch cannot be imported (the test then skips).
"""
import io
import os
import struct
import sys
import zipfile
import zlib

try:
    import torch
except ImportError:
    sys.exit(3)

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
lines = []
torch.manual_seed(38)

OURS = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
        torch.int64: "i64", torch.int32: "i32", torch.int8: "i8", torch.uint8: "u8", torch.bool: "bool"}


def raw(t):
    """The elements of t in C order, as bytes (bf16 through its bits: numpy has no bfloat16)."""
    c = t.detach().contiguous().reshape(-1)
    if c.dtype == torch.bfloat16:
        c = c.view(torch.int16)
    elif c.dtype == torch.bool:
        c = c.to(torch.uint8)
    return c.numpy().tobytes()


def expect(name, t, saved=None, **save_args):
    """Saves `saved` (default t) as name and records that it reads as t."""
    path = os.path.join(out, name)
    torch.save(t if saved is None else saved, path, **save_args)
    with open(path + ".raw", "wb") as f:
        f.write(raw(t))
    shape = "x".join(str(d) for d in t.shape) if t.dim() > 0 else "-"
    lines.append(f"ok {name} {OURS[t.dtype]} {shape} {name}.raw")


def expect_file(name, t):
    """Records that an already written file reads as t."""
    with open(os.path.join(out, name) + ".raw", "wb") as f:
        f.write(raw(t))
    shape = "x".join(str(d) for d in t.shape) if t.dim() > 0 else "-"
    lines.append(f"ok {name} {OURS[t.dtype]} {shape} {name}.raw")


def refuse(name, obj, text, **save_args):
    torch.save(obj, os.path.join(out, name), **save_args)
    lines.append(f"error {name} {text.replace(' ', '_')}")


def values(dtype, shape):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape) * 100).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -(2**31)), min(info.max, 2**31 - 1), shape, dtype=torch.int64).to(dtype)


# Every dtype npuscope has, in both formats.
for dtype, ours in OURS.items():
    expect(f"dtype_{ours}.pt", values(dtype, (3, 5)))
    expect(f"legacy_{ours}.pt", values(dtype, (4, 2)), _use_new_zipfile_serialization=False)

# Views: the whole storage is saved with an offset and strides.
base = values(torch.float32, (6, 8))
expect("view_transposed.pt", base.t())
expect("view_offset.pt", base[2:, 1:4])
expect("view_step.pt", base[:, ::3])
expect("view_permuted.pt", values(torch.float16, (2, 3, 4)).permute(2, 0, 1)[1:])
expect("view_expanded.pt", torch.arange(3, dtype=torch.int64).expand(4, 3))
expect("view_column.pt", base[:, 5])
expect("view_tiles.pt", values(torch.float32, (3, 130, 70)).transpose(1, 2)[:, 5:])  # several 64x64 tiles, and parts
expect("legacy_view.pt", base[1:, ::2].t(), _use_new_zipfile_serialization=False)
# 0-d, empty, big-ish, requires_grad, Parameter, a tensor with Python attributes.
expect("scalar.pt", torch.tensor(3.5, dtype=torch.float64))
expect("empty.pt", torch.empty(0, 3))
expect("empty_1d.pt", torch.empty(0, dtype=torch.int32))
expect("big.pt", values(torch.float32, (1024, 1024)))
expect("requires_grad.pt", torch.randn(3, 4, requires_grad=True))
param = torch.nn.Parameter(torch.randn(4, 4))
expect("parameter.pt", param)
attributed = torch.randn(5)
attributed.note = "kept by _rebuild_from_type_v2"
expect("attributes.pt", attributed)
# msprobe's names: dots in the stem (the archive folder is named after it).
expect("Functional.conv2d.0.forward.input.0.pt", values(torch.bfloat16, (2, 3, 4, 4)))

# Archive variants: written through a file object (folder "archive"), deflated members.
buffer = io.BytesIO()
t = values(torch.int32, (7,))
torch.save(t, buffer)
with open(os.path.join(out, "via_buffer.pt"), "wb") as f:
    f.write(buffer.getvalue())
expect_file("via_buffer.pt", t)
with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as src, \
        zipfile.ZipFile(os.path.join(out, "deflated.pt"), "w", zipfile.ZIP_DEFLATED) as dst:
    for info in src.infolist():
        dst.writestr(info.filename, src.read(info.filename))
expect_file("deflated.pt", t)
with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as src, \
        zipfile.ZipFile(os.path.join(out, "big_endian.pt"), "w") as dst:
    for info in src.infolist():
        dst.writestr(info.filename, src.read(info.filename))
    dst.writestr("archive/byteorder", "big")
lines.append("error big_endian.pt byte_order_'big'")


def zip64_sparse(path, members, hole_member, hole_size):
    """A zip of stored members with ZIP64 central records; hole_member's data is hole_size bytes of
    which only the last len(data) are written (the rest a hole: the file takes no room on disk),
    placed past 4 GiB, so that its size and offset both need the ZIP64 fields."""
    central = b""
    with open(path, "wb") as f:
        for name, data in members:
            name_b = name.encode()
            size = hole_size if name == hole_member else len(data)
            if name == hole_member:
                f.seek((5 << 30) - 30 - len(name_b))
            offset = f.tell()
            f.write(struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, 0, 0, 0, 0, 0xFFFFFFFF, 0xFFFFFFFF, len(name_b), 0))
            f.write(name_b)
            if name == hole_member:
                f.seek(size - len(data), os.SEEK_CUR)
            f.write(data)
            extra = struct.pack("<HHQQQ", 1, 24, size, size, offset)
            central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, 0, 0, 0, zlib.crc32(data), 0xFFFFFFFF,
                                   0xFFFFFFFF, len(name_b), len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + name_b + extra
        cd_offset = f.tell()
        f.write(central)
        end64 = f.tell()
        f.write(struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, len(members), len(members), len(central),
                            cd_offset))
        f.write(struct.pack("<IIQI", 0x07064b50, 0, end64, 1))
        f.write(struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0))


# ZIP64: a u8 storage of 4 GiB + 16 elements, of which the tensor views the last 16 (sparse file).
tail = torch.arange(16, dtype=torch.uint8) * 3
storage_numel = (1 << 32) + 16
pickle_buf = io.BytesIO()
small = torch.zeros(16, dtype=torch.uint8)
torch.save(small, pickle_buf)
with zipfile.ZipFile(io.BytesIO(pickle_buf.getvalue())) as src:
    pkl = src.read("archive/data.pkl")
# The pickle of a 16-element tensor, re-pointed at a storage of 2^32 + 16 elements from offset 2^32.
pkl = pkl.replace(b"K\x10t", b"\x8a\x05" + storage_numel.to_bytes(5, "little") + b"t", 1)
pkl = pkl.replace(b"K\x00K\x10\x85", b"\x8a\x05" + (1 << 32).to_bytes(5, "little") + b"K\x10\x85", 1)
zip64_sparse(os.path.join(out, "zip64.pt"),
             [("archive/data.pkl", pkl), ("archive/version", b"3\n"), ("archive/data/0", tail.numpy().tobytes())],
             "archive/data/0", storage_numel)
expect_file("zip64.pt", tail)

# What npuscope lacks or does not read: clear errors.
refuse("complex.pt", torch.randn(3, dtype=torch.complex64), "torch.complex64 tensor")
refuse("int16.pt", torch.arange(4, dtype=torch.int16), "torch.int16 tensor")
refuse("quantized.pt", torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.qint8), "_rebuild_qtensor")
refuse("dict.pt", {"a": torch.randn(2)}, "not a tensor")
refuse("list.pt", [torch.randn(2)], "not a tensor")

with open(os.path.join(out, "manifest.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
