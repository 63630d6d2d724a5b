// One tensor saved by torch.save: see torch_pt_file.h.
//
// Note [Reading torch.save files]
// msprobe's tensor mode saves every tensor with torch.save(tensor.clone().contiguous().detach()),
// possibly sliced after (dump_tensor_data/*.pt); `npuscope compare` reads them without Python and
// without libtorch (hundreds of MB every command would pay for loading; the comparator must reach
// 1 GB/s end to end). The file is one of two formats:
// - The zip archive of PyTorch 1.6 and later (every 2.x; torch_npu's save too): members
//   <archive>/data.pkl (the pickle), <archive>/data/<key> (each storage's raw bytes),
//   <archive>/version, and in 2.x <archive>/byteorder, .format_version, .storage_alignment,
//   .data/serialization_id. <archive> is the file's stem (1.13: "x" for x.pt) or "archive" (a file
//   object, older versions): any one top-level folder holding data.pkl is accepted. Members are
//   stored, their data 64-byte aligned (the local header's extra field pads it), sizes only in
//   the central directory (local headers use a data descriptor), and the end is always the ZIP64
//   records (torch's miniz writes them even for small files). torch_pt_zip.cpp parses the
//   central directory itself rather than through libzip or minizip: a stored member is then one
//   pread from the page cache straight into the tensor's buffer (a library's read goes through its
//   own buffered file layer: a second copy, or a second buffer of the tensor's size), the parser is
//   ~200 lines with every size and offset checked against the file, and the build gains no
//   dependency. Deflated members (a file re-zipped by hand) are inflated with zlib, slowly but
//   correctly; CRC-32s are not checked (neither does a stored read by torch.load: the comparison
//   shows corrupt data as what it is). ZIP64 sizes and offsets are read wherever the 32-bit field
//   is saturated, so tensors past 4 GB read.
// - The legacy format (torch.save(..., _use_new_zipfile_serialization=False), PyTorch < 1.6):
//   pickles in a row (a magic number, the protocol version 1001, sys_info with the byte order, the
//   object, the list of storage keys), then each storage as an 8-byte element count and its raw
//   bytes. The same pickle machine reads it, so it costs one function here. The tar format of
//   PyTorch < 0.4 is refused with how to re-save.
// The pickle (torch_pt_pickle.h) is run by a restricted machine that builds values and calls only
// the tensor rebuild functions; what it yields is a storage (type, key, element count), an offset,
// a size and a stride. The dtype comes from the storage class (torch.FloatStorage, ...; 2.1+ names
// new dtypes in _rebuild_tensor_v3 over a torch.UntypedStorage) and maps to the vocabulary's
// DType; one npuscope lacks (int16, complex, quantized, uint16/32/64, float8) is an error naming
// it, as is a big-endian byte order. A contiguous tensor (msprobe's case) is read with one copy,
// into the caller's buffer, reused (MsprobeDump::load): a comparison reads every row's tensors into
// the same two buffers, so only the largest tensor pays for page faults (256 MB in 4 KiB pages is
// 65,536 faults: 0.18 s a first read, 0.036 s a read into the warm buffer, on the bench's file).
// Huge pages (MADV_HUGEPAGE) made a first read 0.08 s but, with the kernel's defrag=madvise, could
// stall it ~2 s in memory compaction on a busy machine: reuse gives the speed without the stall; a
// view (an
// offset, a transposed or sliced stride, an expanded stride 0) reads only the part of the storage
// it spans and gathers it into C order, in tiles. Every count, offset and product is checked before
// it is used: a file cut short, an offset past the storage or sizes whose product overflows are a
// collector::MsprobeDumpError naming the file, never a read out of bounds. An expanded view may
// grow past its storage only up to kMaxExpandedBytes, so that a few bytes of pickle cannot ask for
// terabytes.
#include "torch_pt_file.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>

#include "npuscope/runtime_hooks/vocabulary.h"
#include "torch_pt_pickle.h"
#include "torch_pt_zip.h"

namespace npuscope::importer {
namespace {

using collector::DumpTensorData;
using torch_pt::PickledTensor;
using torch_pt::PtFile;

constexpr std::uint64_t kMaxPickleBytes = 1u << 20;  // a tensor's pickle is a few hundred bytes
constexpr std::uint64_t kMaxExpandedBytes = 1u << 30;

// torch's storage classes and the dtypes they hold (torch/storage.py _dtype_to_storage_type_map).
struct TorchDType {
  std::string_view storage, dtype;
  std::optional<DType> ours;
};
constexpr TorchDType kTorchDTypes[] = {
    {"FloatStorage", "float32", DType::kF32},
    {"DoubleStorage", "float64", DType::kF64},
    {"HalfStorage", "float16", DType::kF16},
    {"BFloat16Storage", "bfloat16", DType::kBF16},
    {"LongStorage", "int64", DType::kI64},
    {"IntStorage", "int32", DType::kI32},
    {"ShortStorage", "int16", std::nullopt},
    {"CharStorage", "int8", DType::kI8},
    {"ByteStorage", "uint8", DType::kU8},
    {"BoolStorage", "bool", DType::kBool},
    {"ComplexFloatStorage", "complex64", std::nullopt},
    {"ComplexDoubleStorage", "complex128", std::nullopt},
    {"QInt8Storage", "qint8", std::nullopt},
    {"QUInt8Storage", "quint8", std::nullopt},
    {"QInt32Storage", "qint32", std::nullopt},
    {"QUInt4x2Storage", "quint4x2", std::nullopt},
    {"QUInt2x4Storage", "quint2x4", std::nullopt},
};

DType tensor_dtype(const PtFile& file, const PickledTensor& t) {
  const TorchDType* found = nullptr;
  for (const TorchDType& d : kTorchDTypes) {
    if (t.dtype.empty() ? d.storage == t.storage.type : d.dtype == t.dtype) found = &d;
  }
  const std::string name = t.dtype.empty() ? (found != nullptr ? std::string(found->dtype) : "") : t.dtype;
  if (found == nullptr && name.empty())
    file.fail("a tensor of the storage type torch." + t.storage.type + ", which npuscope does not know");
  if (found == nullptr || !found->ours) {
    std::string known;
    for (const TorchDType& d : kTorchDTypes) {
      if (d.ours) known += (known.empty() ? "" : ", ") + std::string(d.dtype);
    }
    file.fail("a torch." + name + " tensor: npuscope has no such dtype (it reads " + known + ")");
  }
  return *found->ours;
}

// Where a storage's bytes are: a zip member, or a range of a legacy file.
struct StorageSource {
  std::uint64_t bytes = 0;                                        // how many there are
  std::function<void(std::uint64_t, void*, std::uint64_t)> read;  // (offset, dst, n)
};

// Sizes a tensor's buffer, reusing its capacity (Note [Reading torch.save files]): a buffer too small
// is freed before the new one is taken, so that two never coexist.
void allocate(std::vector<std::uint8_t>& buffer, std::size_t n) {
  if (buffer.capacity() < n) {
    std::vector<std::uint8_t>().swap(buffer);
    buffer.reserve(n);
  }
  buffer.resize(n);
}

bool is_c_contiguous(const PickledTensor& t) {
  std::int64_t expected = 1;
  for (std::size_t i = t.size.size(); i-- > 0;) {
    if (t.size[i] != 1 && t.stride[i] != expected) return false;
    expected *= t.size[i];
  }
  return true;
}

// Copies the view's elements into C order: an odometer over the outer dims, and the last two dims
// (rows, columns) copied in kTile x kTile tiles, so that a transposed view (columns far apart in the
// storage) reads each cache line once per tile rather than once per element.
template <class T>
void gather(const std::uint8_t* src, std::uint8_t* dst, const PickledTensor& t) {
  constexpr std::int64_t kTile = 64;
  const std::size_t nd = t.size.size();  // >= 1: a 0-d tensor is contiguous
  const std::size_t outer = nd >= 2 ? nd - 2 : 0;
  const std::int64_t rows = nd >= 2 ? t.size[nd - 2] : 1, row_stride = nd >= 2 ? t.stride[nd - 2] : 0;
  const std::int64_t cols = t.size[nd - 1], col_stride = t.stride[nd - 1];
  std::vector<std::int64_t> index(outer, 0);
  std::int64_t at = 0;  // element offset of `index` in src (the span starts at the tensor's offset)
  T* out = reinterpret_cast<T*>(dst);
  const T* in = reinterpret_cast<const T*>(src);
  for (;;) {
    for (std::int64_t r0 = 0; r0 < rows; r0 += kTile) {
      for (std::int64_t c0 = 0; c0 < cols; c0 += kTile) {
        for (std::int64_t r = r0; r < std::min(rows, r0 + kTile); ++r) {
          const T* row = in + at + r * row_stride;
          T* o = out + r * cols;
          for (std::int64_t c = c0; c < std::min(cols, c0 + kTile); ++c)
            std::memcpy(o + c, row + c * col_stride, sizeof(T));
        }
      }
    }
    out += rows * cols;
    std::size_t d = outer;
    for (;;) {
      if (d == 0) return;
      --d;
      if (++index[d] < t.size[d]) {
        at += t.stride[d];
        break;
      }
      at -= (t.size[d] - 1) * t.stride[d];
      index[d] = 0;
    }
  }
}

// The tensor's elements in C order, read from its storage: checked, then one read (contiguous) or
// a read of the span it views and a gather.
void assemble(const PtFile& file, const PickledTensor& t, DType dtype, const StorageSource& src, DumpTensorData& out) {
  out.dtype_id = static_cast<std::int32_t>(dtype);
  out.shape = t.size;
  const auto esize = static_cast<std::int64_t>(dtype_size(dtype));
  std::int64_t numel = 1, last = t.storage_offset;  // `last`: the highest element the view reaches
  bool overflow = false;
  for (std::size_t i = 0; i < t.size.size(); ++i) {
    if (t.size[i] < 0 || t.stride[i] < 0) file.fail("a tensor with a negative size or stride");
    overflow = overflow || __builtin_mul_overflow(numel, t.size[i], &numel);
  }
  if (overflow) file.fail("a tensor whose sizes' product overflows");
  out.numel = numel;
  if (numel == 0) return out.bytes.clear();
  if (t.storage_offset < 0) file.fail("a tensor at a negative storage offset");
  for (std::size_t i = 0; i < t.size.size(); ++i) {
    std::int64_t reach = 0;
    overflow = overflow || __builtin_mul_overflow(t.size[i] - 1, t.stride[i], &reach) ||
               __builtin_add_overflow(last, reach, &last);
  }
  std::int64_t out_bytes = 0, span_bytes = 0;
  if (overflow || __builtin_mul_overflow(numel, esize, &out_bytes) ||
      __builtin_mul_overflow(last + 1, esize, &span_bytes)) {
    file.fail("a tensor whose extent overflows");
  }
  // An untyped storage (_rebuild_tensor_v3) counts bytes; the typed ones count their elements.
  const std::int64_t storage_numel = t.storage.type == "UntypedStorage" ? t.storage.numel / esize : t.storage.numel;
  if (last >= storage_numel) {
    file.fail("a tensor reaching element " + std::to_string(last) + " of a storage of " +
              std::to_string(storage_numel));
  }
  if (static_cast<std::uint64_t>(span_bytes) > src.bytes) {
    file.fail("the storage data/" + t.storage.key + " is cut short (" + std::to_string(src.bytes) +
              " bytes, the tensor needs " + std::to_string(span_bytes) + ")");
  }
  const std::int64_t first_byte = t.storage_offset * esize;
  if (out_bytes > span_bytes - first_byte && static_cast<std::uint64_t>(out_bytes) > kMaxExpandedBytes) {
    file.fail("an expanded view of " + std::to_string(out_bytes) + " bytes over a storage of " +
              std::to_string(span_bytes - first_byte));
  }
  allocate(out.bytes, static_cast<std::size_t>(out_bytes));
  if (is_c_contiguous(t)) {
    src.read(first_byte, out.bytes.data(), out_bytes);
    return;
  }
  std::vector<std::uint8_t> span;
  allocate(span, static_cast<std::size_t>(span_bytes - first_byte));
  src.read(first_byte, span.data(), span.size());
  switch (esize) {
    case 1: gather<std::uint8_t>(span.data(), out.bytes.data(), t); break;
    case 2: gather<std::uint16_t>(span.data(), out.bytes.data(), t); break;
    case 4: gather<std::uint32_t>(span.data(), out.bytes.data(), t); break;
    default: gather<std::uint64_t>(span.data(), out.bytes.data(), t); break;
  }
}

void read_zip(const PtFile& file, DumpTensorData& out) {
  const torch_pt::ZipArchive zip(file);
  std::string prefix;
  for (const torch_pt::ZipEntry& e : zip.entries()) {
    const std::size_t slash = e.name.find('/');
    if (slash == std::string::npos || e.name.substr(slash) != "/data.pkl") continue;
    if (!prefix.empty()) file.fail("several archives in one zip (" + prefix + "/data.pkl and " + e.name + ")");
    prefix = e.name.substr(0, slash);
  }
  if (prefix.empty()) file.fail("a zip archive without <archive>/data.pkl: not a torch.save file");
  if (const torch_pt::ZipEntry* order = zip.find(prefix + "/byteorder")) {
    const std::string value = zip.read_all(*order, 16);
    if (value != "little")
      file.fail("saved with the byte order '" + value +
                "': npuscope reads little-endian tensors (re-save on a little-endian machine)");
  }
  const std::string pickle = zip.read_all(*zip.find(prefix + "/data.pkl"), kMaxPickleBytes);
  torch_pt::Unpickler u(pickle, file.path());
  const PickledTensor t = u.tensor(u.run());
  const DType dtype = tensor_dtype(file, t);
  const torch_pt::ZipEntry* data = zip.find(prefix + "/data/" + t.storage.key);
  if (data == nullptr) file.fail("the storage " + prefix + "/data/" + t.storage.key + " the pickle names is missing");
  zip.data_offset(*data);  // checks it lies in the file
  assemble(file, t, dtype,
           {data->size, [&](std::uint64_t off, void* dst, std::uint64_t n) { zip.read(*data, off, dst, n); }}, out);
}

// The legacy format's pickles, in a buffer of the file's first `window` bytes.
void read_legacy(const PtFile& file, const std::string& head, DumpTensorData& out) {
  static constexpr unsigned char kMagic[] = {0x6c, 0xfc, 0x9c, 0x46, 0xf9,
                                             0x20, 0x6a, 0xa8, 0x50, 0x19};  // 0x1950a86a20f9469cfc6c
  torch_pt::Unpickler u(head, file.path());
  using Kind = torch_pt::Unpickler::Kind;
  const auto magic = u.run();
  if (u.kind(magic) != Kind::kBigInt ||
      u.text(magic) != std::string_view(reinterpret_cast<const char*>(kMagic), sizeof kMagic)) {
    file.fail("a pickle that is not torch.save's (no magic number): not a torch.save file");
  }
  const std::int64_t protocol = u.integer(u.run());
  if (protocol != 1001)
    file.fail("the legacy torch.save protocol " + std::to_string(protocol) + " (npuscope reads 1001)");
  const auto sys_info = u.run();
  const auto& info = u.items(sys_info);
  for (std::size_t i = 0; i + 1 < info.size(); i += 2) {
    if (u.kind(info[i]) == Kind::kText && u.text(info[i]) == "little_endian" && u.integer(info[i + 1]) == 0) {
      file.fail(
          "saved on a big-endian machine: npuscope reads little-endian tensors (re-save on a little-endian machine)");
    }
  }
  const PickledTensor t = u.tensor(u.run());
  const DType dtype = tensor_dtype(file, t);
  const auto& keys = u.items(u.run());
  if (keys.size() != 1 || u.text(keys[0]) != t.storage.key) {
    file.fail("a legacy file of " + std::to_string(keys.size()) + " storages: npuscope reads one tensor per file");
  }
  const std::uint64_t at = u.pos();
  std::int64_t count = 0;
  file.read(at, &count, 8, "the storage's element count");
  std::int64_t bytes = 0;
  if (count < 0 || __builtin_mul_overflow(count, static_cast<std::int64_t>(dtype_size(dtype)), &bytes) ||
      static_cast<std::uint64_t>(bytes) > file.size() - at - 8) {
    file.fail("the storage " + t.storage.key + " is cut short (" + std::to_string(count) + " elements claimed)");
  }
  assemble(file, t, dtype,
           {static_cast<std::uint64_t>(bytes),
            [&](std::uint64_t off, void* dst, std::uint64_t n) {
              file.read(at + 8 + off, dst, n, "the storage " + t.storage.key);
            }},
           out);
}

}  // namespace

collector::DumpTensorData read_torch_pt(const std::string& path) {
  DumpTensorData out;
  read_torch_pt(path, out);
  return out;
}

void read_torch_pt(const std::string& path, DumpTensorData& out) {
  const PtFile file(path);
  if (file.size() == 0) file.fail("empty: not a torch.save file");
  const std::string head = file.read(0, std::min<std::uint64_t>(file.size(), 4), "the file's first bytes");
  if (head.starts_with("PK\x03\x04") || head.starts_with("PK\x05\x06")) return read_zip(file, out);
  if (static_cast<unsigned char>(head[0]) == 0x80) {
    // The legacy pickles are a few hundred bytes: read a window, and the whole head only if they
    // run past it (an error then says what is wrong with them).
    constexpr std::uint64_t kWindow = 64u << 10;
    if (file.size() > kWindow) {
      try {
        return read_legacy(file, file.read(0, kWindow, "the legacy pickles"), out);
      } catch (const collector::MsprobeDumpError&) {
      }
    }
    return read_legacy(file, file.read(0, std::min(file.size(), kMaxPickleBytes), "the legacy pickles"), out);
  }
  if (file.size() > 262 && file.read(257, 5, "a tar header") == "ustar") {
    file.fail("the tar format of PyTorch before 0.4: load and re-save it with a current torch.save");
  }
  file.fail("not a torch.save file (neither its zip archive nor its legacy pickles)");
}

}  // namespace npuscope::importer
