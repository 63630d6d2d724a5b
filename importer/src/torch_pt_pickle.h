// The pickle of a torch.save file, read by a machine that understands only what torch.save writes
// for a tensor (Note [Reading torch.save files] in torch_pt_file.cpp). It runs the opcodes that
// build values (ints, strings, tuples, lists, dicts, memo), never executes anything: a GLOBAL is
// accepted only when it names one of the rebuild functions or classes a saved tensor refers to, and
// a REDUCE only calls those. Anything else is a collector::MsprobeDumpError naming the file, the
// opcode or global, and its offset in the pickle.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace npuscope::importer::torch_pt {

// The storage a tensor views: a persistent id ('storage', torch.<type>, key, location, numel).
struct PickledStorage {
  std::string type;        // the storage class: "FloatStorage", "BFloat16Storage", "UntypedStorage", ...
  std::string key;         // names its data: the archive member data/<key>, or the legacy format's key
  std::string location;    // "cpu", "cuda:0", "npu:0": where it lived (its data is in the file anyway)
  std::int64_t numel = 0;  // elements of the storage type
};

// A tensor as torch._utils._rebuild_tensor_v2 / _v3 (or a Parameter around it) receives it.
struct PickledTensor {
  PickledStorage storage;
  std::string dtype;  // _rebuild_tensor_v3's dtype ("uint16", "float8_e4m3fn"); "" when the storage type says it
  std::int64_t storage_offset = 0;
  std::vector<std::int64_t> size, stride;
  bool requires_grad = false;
};

// One pickle machine over one buffer; run() may be called again from where the last pickle ended
// (the legacy format is several pickles in a row).
class Unpickler {
 public:
  using Ref = std::uint32_t;  // an object of this machine
  enum class Kind : std::uint8_t {
    kNone,
    kBool,
    kInt,
    kBigInt,
    kFloat,
    kText,
    kBytes,
    kTuple,
    kList,
    kDict,
    kGlobal,
    kStorage,
    kTensor
  };

  Unpickler(std::string_view bytes, std::string file);

  // Runs the pickle at pos() to its STOP; returns what it built.
  Ref run();
  std::size_t pos() const { return pos_; }

  Kind kind(Ref r) const { return objects_[r].kind; }
  std::int64_t integer(Ref r) const;           // kBool, kInt; else an error
  const std::string& text(Ref r) const;        // kText, kBytes, kBigInt (its little-endian bytes)
  const std::vector<Ref>& items(Ref r) const;  // kTuple, kList, kDict (key, value, key, value, ...)
  // The tensor a pickle built; an error naming what it built instead.
  PickledTensor tensor(Ref r) const;

  [[noreturn]] void fail(const std::string& message) const;  // "<file>: the pickle at byte N: message"

 private:
  enum class Global : std::uint8_t;  // what a GLOBAL named (torch_pt_pickle.cpp)
  struct Object {
    Kind kind = Kind::kNone;
    Global global{};           // kGlobal: which; kTensor: the rebuild that made it
    std::int64_t integer = 0;  // kBool, kInt; kTensor: requires_grad
    double real = 0;
    std::string text;        // kText, kBytes, kBigInt; kGlobal: "module.name"
    std::vector<Ref> items;  // kTuple, kList, kDict (key, value, ...); kStorage: the persistent id; kTensor: its args
  };

  Ref make(Kind kind);
  Ref make_text(Kind kind, std::string_view text);
  Ref pop();
  Ref top() const;
  std::vector<Ref> pop_to_mark();
  std::string_view take(std::uint64_t n);
  std::uint64_t take_le(int bytes);
  std::string_view take_line();
  void op_global(std::string_view module, std::string_view name);
  void op_reduce();
  Ref call(Ref callable, Ref args);
  Ref persistent_load(Ref pid);
  void op_memo_get(std::uint64_t index);
  bool step(std::uint8_t op);
  std::string describe(Ref r) const;
  void check_tensor_args(const std::vector<Ref>& a, std::size_t min, std::size_t max, std::string_view fn) const;

  std::string_view bytes_;
  std::string file_;
  std::size_t pos_ = 0, op_pos_ = 0;
  std::vector<Object> objects_;
  std::vector<Ref> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Ref> memo_;
};

}  // namespace npuscope::importer::torch_pt
