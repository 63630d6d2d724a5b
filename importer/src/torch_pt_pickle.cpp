// The pickle of a torch.save file: see torch_pt_pickle.h.
#include "torch_pt_pickle.h"

#include <algorithm>
#include <cstring>

#include "npuscope/collector/msprobe_dump.h"

namespace npuscope::importer::torch_pt {

// What a GLOBAL may name: the functions and classes torch.save's pickle of a tensor refers to.
enum class Unpickler::Global : std::uint8_t {
  kNone,
  kRebuildV2,       // torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata])
  kRebuildV3,       // torch._utils._rebuild_tensor_v3(..., hooks, dtype[, metadata]): the dtypes of PyTorch 2.1+
  kRebuildNpu,      // torch_npu.utils.storage._rebuild_npu_tensor(..., hooks, npu_format): torch_npu's save
  kParameter,       // torch._utils._rebuild_parameter(tensor, requires_grad, hooks)
  kParameterState,  // torch._utils._rebuild_parameter_with_state(tensor, requires_grad, hooks, state)
  kFromType,        // torch._tensor._rebuild_from_type_v2(func, type, args, state): a tensor with attributes
  kOrderedDict,     // collections.OrderedDict(): the (empty) backward hooks
  kTensorClass,     // torch.Tensor, torch.nn.Parameter: the type argument of _rebuild_from_type_v2
  kStorageClass,    // torch.FloatStorage, ..., torch.UntypedStorage: named by a persistent id
  kDtype,           // torch.float32, torch.uint16, ...: _rebuild_tensor_v3's dtype
};

namespace {

// Pickle opcodes (Python's Lib/pickletools.py names them), those torch.save's pickler emits for a
// tensor at protocols 2-5 and a few neighbours that build plain values.
enum Op : std::uint8_t {
  kMark = '(',
  kStop = '.',
  kPop = '0',
  kPopMark = '1',
  kDup = '2',
  kBinFloat = 'G',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kBinInt2 = 'M',
  kNone = 'N',
  kBinPersId = 'Q',
  kReduce = 'R',
  kBinUnicode = 'X',
  kEmptyList = ']',
  kAppend = 'a',
  kBuild = 'b',
  kGlobal = 'c',
  kDict = 'd',
  kAppends = 'e',
  kBinGet = 'h',
  kLongBinGet = 'j',
  kList = 'l',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kSetItem = 's',
  kTuple = 't',
  kSetItems = 'u',
  kEmptyDict = '}',
  kEmptyTuple = ')',
  kShortBinBytes = 'C',
  kBinBytes = 'B',
  kProto = 0x80,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kLong4 = 0x8b,
  kShortBinUnicode = 0x8c,
  kBinUnicode8 = 0x8d,
  kBinBytes8 = 0x8e,
  kEmptySet = 0x8f,
  kFrozenSet = 0x91,
  kStackGlobal = 0x93,
  kMemoize = 0x94,
  kFrame = 0x95,
};

bool is_identifier(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool is_lower_identifier(std::string_view s) {
  return is_identifier(s) && std::none_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

}  // namespace

Unpickler::Unpickler(std::string_view bytes, std::string file) : bytes_(bytes), file_(std::move(file)) {}

void Unpickler::fail(const std::string& message) const {
  throw collector::MsprobeDumpError(file_ + ": the pickle at byte " + std::to_string(op_pos_) + ": " + message);
}

Unpickler::Ref Unpickler::make(Kind kind) {
  objects_.emplace_back().kind = kind;
  return static_cast<Ref>(objects_.size() - 1);
}

Unpickler::Ref Unpickler::make_text(Kind kind, std::string_view text) {
  const Ref r = make(kind);
  objects_[r].text = std::string(text);
  return r;
}

Unpickler::Ref Unpickler::pop() {
  if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) fail("an opcode pops an empty stack");
  const Ref r = stack_.back();
  stack_.pop_back();
  return r;
}

Unpickler::Ref Unpickler::top() const {
  if (stack_.empty()) fail("an opcode reads an empty stack");
  return stack_.back();
}

std::vector<Unpickler::Ref> Unpickler::pop_to_mark() {
  if (marks_.empty()) fail("an opcode needs a MARK there is none of");
  std::vector<Ref> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
  stack_.resize(marks_.back());
  marks_.pop_back();
  return items;
}

std::string_view Unpickler::take(std::uint64_t n) {
  if (bytes_.size() - pos_ < n) fail("cut short (the pickle ends inside an opcode)");
  const std::string_view v = bytes_.substr(pos_, n);
  pos_ += n;
  return v;
}

std::uint64_t Unpickler::take_le(int bytes) {
  const std::string_view b = take(bytes);
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(b[i]);
  return v;
}

std::string_view Unpickler::take_line() {
  const std::size_t end = bytes_.find('\n', pos_);
  if (end == std::string_view::npos) fail("cut short (a GLOBAL without its newline)");
  const std::string_view line = bytes_.substr(pos_, end - pos_);
  pos_ = end + 1;
  return line;
}

std::int64_t Unpickler::integer(Ref r) const {
  const Object& o = objects_[r];
  if (o.kind != Kind::kInt && o.kind != Kind::kBool) fail("expected an integer, found " + describe(r));
  return o.integer;
}

const std::string& Unpickler::text(Ref r) const {
  const Object& o = objects_[r];
  if (o.kind != Kind::kText && o.kind != Kind::kBytes && o.kind != Kind::kBigInt)
    fail("expected a string, found " + describe(r));
  return o.text;
}

const std::vector<Unpickler::Ref>& Unpickler::items(Ref r) const {
  const Object& o = objects_[r];
  if (o.kind != Kind::kTuple && o.kind != Kind::kList && o.kind != Kind::kDict)
    fail("expected a tuple, found " + describe(r));
  return o.items;
}

std::string Unpickler::describe(Ref r) const {
  const Object& o = objects_[r];
  switch (o.kind) {
    case Kind::kNone: return "None";
    case Kind::kBool: return o.integer != 0 ? "True" : "False";
    case Kind::kInt: return "the integer " + std::to_string(o.integer);
    case Kind::kBigInt: return "an integer of " + std::to_string(o.text.size()) + " bytes";
    case Kind::kFloat: return "a float";
    case Kind::kText: return "the string '" + o.text.substr(0, 64) + "'";
    case Kind::kBytes: return "bytes";
    case Kind::kTuple: return "a tuple of " + std::to_string(o.items.size());
    case Kind::kList: return "a list of " + std::to_string(o.items.size());
    case Kind::kDict: return "a dict of " + std::to_string(o.items.size() / 2);
    case Kind::kGlobal: return o.text;
    case Kind::kStorage: return "a storage";
    case Kind::kTensor: return "a tensor";
  }
  return "?";
}

void Unpickler::op_global(std::string_view module, std::string_view name) {
  static constexpr struct {
    std::string_view module, name;
    Global global;
  } kKnown[] = {
      {"torch._utils", "_rebuild_tensor_v2", Global::kRebuildV2},
      {"torch._utils", "_rebuild_tensor_v3", Global::kRebuildV3},
      {"torch._utils", "_rebuild_parameter", Global::kParameter},
      {"torch._utils", "_rebuild_parameter_with_state", Global::kParameterState},
      {"torch._tensor", "_rebuild_from_type_v2", Global::kFromType},
      {"torch._tensor", "Tensor", Global::kTensorClass},
      {"torch", "Tensor", Global::kTensorClass},
      {"torch.nn.parameter", "Parameter", Global::kTensorClass},
      {"collections", "OrderedDict", Global::kOrderedDict},
  };
  Global g = Global::kNone;
  for (const auto& k : kKnown) {
    if (k.module == module && k.name == name) g = k.global;
  }
  if (g == Global::kNone && module.starts_with("torch_npu.") && name == "_rebuild_npu_tensor") g = Global::kRebuildNpu;
  if (g == Global::kNone && module == "torch" && name.ends_with("Storage") && is_identifier(name))
    g = Global::kStorageClass;
  if (g == Global::kNone && module == "torch" && is_lower_identifier(name)) g = Global::kDtype;
  const std::string full = std::string(module) + "." + std::string(name);
  if (g == Global::kNone)
    fail("refers to " + full.substr(0, 200) + ": npuscope reads one dense tensor per file and runs no code");
  const Ref r = make_text(Kind::kGlobal, full);
  objects_[r].global = g;
  stack_.push_back(r);
}

void Unpickler::check_tensor_args(const std::vector<Ref>& a, std::size_t min, std::size_t max,
                                  std::string_view fn) const {
  if (a.size() < min || a.size() > max) fail(std::string(fn) + " with " + std::to_string(a.size()) + " arguments");
}

// Calls one of the understood functions: builds a value, runs nothing.
Unpickler::Ref Unpickler::call(Ref callable, Ref args_ref) {
  if (objects_[callable].kind != Kind::kGlobal) fail("calls " + describe(callable) + ", which is not a function");
  // Copies: make() below may move the objects.
  const Global global = objects_[callable].global;
  const std::string name = objects_[callable].text;
  if (objects_[args_ref].kind != Kind::kTuple) fail(name + " called with " + describe(args_ref));
  const std::vector<Ref> args = objects_[args_ref].items;
  switch (global) {
    case Global::kOrderedDict: return make(Kind::kDict);
    case Global::kRebuildV2: check_tensor_args(args, 6, 7, name); break;
    case Global::kRebuildV3: check_tensor_args(args, 7, 8, name); break;
    case Global::kRebuildNpu: check_tensor_args(args, 7, 7, name); break;
    case Global::kParameter:
    case Global::kParameterState: {
      check_tensor_args(args, global == Global::kParameter ? 3 : 4, global == Global::kParameter ? 3 : 4, name);
      if (objects_[args[0]].kind != Kind::kTensor) fail(name + " of " + describe(args[0]));
      const Ref t = make(Kind::kTensor);
      objects_[t] = objects_[args[0]];
      objects_[t].integer = integer(args[1]);
      return t;
    }
    case Global::kFromType: {
      check_tensor_args(args, 4, 4, name);
      const Object& type = objects_[args[1]];
      if (type.kind != Kind::kGlobal || type.global != Global::kTensorClass)
        fail(name + " of the type " + describe(args[1]));
      if (objects_[args[0]].kind == Kind::kGlobal && objects_[args[0]].global == Global::kFromType)
        fail(name + " of itself");
      return call(args[0], args[2]);
    }
    default: fail("calls " + name + ", which npuscope does not call (it reads tensors, never runs code)");
  }
  if (objects_[args[0]].kind != Kind::kStorage) fail(name + " of " + describe(args[0]) + " instead of a storage");
  const Ref t = make(Kind::kTensor);
  objects_[t].global = global;
  objects_[t].items = args;
  objects_[t].integer = integer(args[4]);
  return t;
}

void Unpickler::op_reduce() {
  const Ref args = pop();
  const Ref callable = pop();
  stack_.push_back(call(callable, args));
}

// A persistent id names a storage whose data is outside the pickle: ('storage', torch.<Type>Storage,
// key, location, numel), and in the legacy format a sixth item, the view of it (None).
Unpickler::Ref Unpickler::persistent_load(Ref pid) {
  if (objects_[pid].kind != Kind::kTuple) fail("a persistent id that is " + describe(pid) + ", not a tuple");
  const std::vector<Ref> id = objects_[pid].items;  // a copy: make() below may move the objects
  if (id.size() < 5 || id.size() > 6 || objects_[id[0]].kind != Kind::kText || objects_[id[0]].text != "storage") {
    fail("a persistent id that is not a storage's ('storage', type, key, location, numel)");
  }
  const Object& type = objects_[id[1]];
  if (type.kind != Kind::kGlobal || type.global != Global::kStorageClass)
    fail("a storage of the type " + describe(id[1]));
  if (id.size() == 6 && objects_[id[5]].kind != Kind::kNone)
    fail("a storage view (legacy format): re-save the tensor with a current torch.save");
  text(id[2]);
  text(id[3]);
  if (integer(id[4]) < 0) fail("a storage of " + std::to_string(integer(id[4])) + " elements");
  const Ref r = make(Kind::kStorage);
  objects_[r].items = id;
  return r;
}

void Unpickler::op_memo_get(std::uint64_t index) {
  const auto it = memo_.find(index);
  if (it == memo_.end()) fail("reads the memo entry " + std::to_string(index) + ", never written");
  stack_.push_back(it->second);
}

// One opcode; false at STOP.
bool Unpickler::step(std::uint8_t op) {
  const auto push = [this](Ref r) { stack_.push_back(r); };
  const auto push_int = [&](std::int64_t v) {
    const Ref r = make(Kind::kInt);
    objects_[r].integer = v;
    push(r);
  };
  const auto container = [&](Kind kind, std::vector<Ref> items) {
    const Ref r = make(kind);
    objects_[r].items = std::move(items);
    push(r);
  };
  const auto extend = [&](Kind kind, const std::vector<Ref>& items) {
    Object& o = objects_[top()];
    if (o.kind != kind) fail(std::string(kind == Kind::kList ? "APPENDS to " : "SETITEMS to ") + describe(top()));
    if (kind == Kind::kDict && items.size() % 2 != 0) fail("SETITEMS with a key without a value");
    o.items.insert(o.items.end(), items.begin(), items.end());
  };
  switch (op) {
    case kProto: take(1); break;
    case kFrame: take(8); break;  // frames only group opcodes; the whole pickle is in memory
    case kStop: return false;
    case kMark: marks_.push_back(stack_.size()); break;
    case kPop:
      if (!marks_.empty() && marks_.back() == stack_.size()) {
        marks_.pop_back();
      } else {
        pop();
      }
      break;
    case kPopMark: pop_to_mark(); break;
    case kDup: push(top()); break;
    case kNone: push(make(Kind::kNone)); break;
    case kNewTrue:
    case kNewFalse: {
      const Ref r = make(Kind::kBool);
      objects_[r].integer = op == kNewTrue ? 1 : 0;
      push(r);
      break;
    }
    case kBinInt: push_int(static_cast<std::int32_t>(take_le(4))); break;
    case kBinInt1: push_int(static_cast<std::int64_t>(take_le(1))); break;
    case kBinInt2: push_int(static_cast<std::int64_t>(take_le(2))); break;
    case kLong1:
    case kLong4: {
      const std::uint64_t n = op == kLong1 ? take_le(1) : take_le(4);
      if (n > 0x7FFFFFFF) fail("LONG4 of a negative length");
      const std::string_view b = take(n);
      if (n > 8) {
        push(make_text(Kind::kBigInt, b));
        break;
      }
      std::uint64_t v = 0;
      for (std::size_t i = n; i-- > 0;) v = v << 8 | static_cast<unsigned char>(b[i]);
      if (n > 0 && n < 8 && (static_cast<unsigned char>(b[n - 1]) & 0x80) != 0) v |= ~std::uint64_t{0} << (8 * n);
      push_int(static_cast<std::int64_t>(v));
      break;
    }
    case kBinFloat: {
      std::uint64_t bits = 0;
      for (const char c : take(8)) bits = bits << 8 | static_cast<unsigned char>(c);  // big-endian
      const Ref r = make(Kind::kFloat);
      std::memcpy(&objects_[r].real, &bits, 8);
      push(r);
      break;
    }
    case kShortBinUnicode: push(make_text(Kind::kText, take(take_le(1)))); break;
    case kBinUnicode: push(make_text(Kind::kText, take(take_le(4)))); break;
    case kBinUnicode8: push(make_text(Kind::kText, take(take_le(8)))); break;
    case kShortBinBytes: push(make_text(Kind::kBytes, take(take_le(1)))); break;
    case kBinBytes: push(make_text(Kind::kBytes, take(take_le(4)))); break;
    case kBinBytes8: push(make_text(Kind::kBytes, take(take_le(8)))); break;
    case kEmptyTuple: container(Kind::kTuple, {}); break;
    case kEmptyList: container(Kind::kList, {}); break;
    case kEmptyDict: container(Kind::kDict, {}); break;
    case kTuple: container(Kind::kTuple, pop_to_mark()); break;
    case kTuple1:
    case kTuple2:
    case kTuple3: {
      std::vector<Ref> items(op - kTuple1 + 1);
      for (std::size_t i = items.size(); i-- > 0;) items[i] = pop();
      container(Kind::kTuple, std::move(items));
      break;
    }
    case kList: container(Kind::kList, pop_to_mark()); break;
    case kDict: {
      std::vector<Ref> items = pop_to_mark();
      if (items.size() % 2 != 0) fail("DICT with a key without a value");
      container(Kind::kDict, std::move(items));
      break;
    }
    case kAppend: {
      const Ref v = pop();
      extend(Kind::kList, {v});
      break;
    }
    case kAppends: extend(Kind::kList, pop_to_mark()); break;
    case kSetItem: {
      const Ref v = pop(), k = pop();
      extend(Kind::kDict, {k, v});
      break;
    }
    case kSetItems: extend(Kind::kDict, pop_to_mark()); break;
    case kBuild: pop(), top(); break;  // an object's state (a tensor's Python attributes): not needed
    case kGlobal: {
      const std::string_view module = take_line();
      op_global(module, take_line());
      break;
    }
    case kStackGlobal: {
      const Ref name = pop(), module = pop();
      if (objects_[name].kind != Kind::kText || objects_[module].kind != Kind::kText)
        fail("STACK_GLOBAL of non-strings");
      op_global(objects_[module].text, objects_[name].text);
      break;
    }
    case kReduce: op_reduce(); break;
    case kBinPersId: push(persistent_load(pop())); break;
    case kBinPut: memo_[take_le(1)] = top(); break;
    case kLongBinPut: memo_[take_le(4)] = top(); break;
    case kMemoize: memo_[memo_.size()] = top(); break;
    case kBinGet: op_memo_get(take_le(1)); break;
    case kLongBinGet: op_memo_get(take_le(4)); break;
    default: {
      static constexpr char kHex[] = "0123456789abcdef";
      std::string name = "0x";
      name += kHex[op >> 4];
      name += kHex[op & 15];
      if (op >= 0x20 && op < 0x7f) name += std::string(" ('") + static_cast<char>(op) + "')";
      fail("the opcode " + name + ", which torch.save does not write for a tensor");
    }
  }
  return true;
}

Unpickler::Ref Unpickler::run() {
  stack_.clear();
  marks_.clear();
  memo_.clear();
  for (;;) {
    op_pos_ = pos_;
    if (!step(static_cast<std::uint8_t>(take(1)[0]))) break;
  }
  if (!marks_.empty() || stack_.size() != 1)
    fail("STOP with " + std::to_string(stack_.size()) + " values on the stack");
  return stack_.back();
}

PickledTensor Unpickler::tensor(Ref r) const {
  const Object& t = objects_[r];
  if (t.kind != Kind::kTensor) fail("the file holds " + describe(r) + ", not a tensor");
  const std::vector<Ref>& a = t.items;
  const auto ints = [&](Ref list, std::string_view what) {
    const Object& o = objects_[list];
    if (o.kind != Kind::kTuple && o.kind != Kind::kList)
      fail(std::string(what) + " is " + describe(list) + ", not a tuple");
    std::vector<std::int64_t> v;
    v.reserve(o.items.size());
    for (const Ref i : o.items) v.push_back(integer(i));
    return v;
  };
  const auto no_metadata = [&](Ref m) {
    if (objects_[m].kind != Kind::kDict || !objects_[m].items.empty()) {
      fail("a tensor with metadata (the conjugate or negative bit of a complex view): npuscope reads real tensors");
    }
  };
  PickledTensor out;
  const std::vector<Ref>& id = objects_[a[0]].items;
  out.storage.type = objects_[id[1]].text.substr(std::string_view("torch.").size());
  out.storage.key = text(id[2]);
  out.storage.location = text(id[3]);
  out.storage.numel = integer(id[4]);
  out.storage_offset = integer(a[1]);
  out.size = ints(a[2], "the size");
  out.stride = ints(a[3], "the stride");
  out.requires_grad = t.integer != 0;
  if (t.global == Global::kRebuildV2 && a.size() == 7) no_metadata(a[6]);
  if (t.global == Global::kRebuildV3) {
    const Object& dtype = objects_[a[6]];
    if (dtype.kind != Kind::kGlobal || dtype.global != Global::kDtype)
      fail("_rebuild_tensor_v3 with the dtype " + describe(a[6]));
    out.dtype = dtype.text.substr(std::string_view("torch.").size());
    if (a.size() == 8) no_metadata(a[7]);
  }
  if (out.size.size() != out.stride.size())
    fail("a tensor of " + std::to_string(out.size.size()) + " sizes and " + std::to_string(out.stride.size()) +
         " strides");
  return out;
}

}  // namespace npuscope::importer::torch_pt
