// See launch_names.h.
#include "launch_names.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "name_scope.h"
#include "npuscope/emulator/formats.h"
#include "npuscope/emulator/markers.h"

namespace npuscope::emulator {
namespace {

// Note [Instance names without a lock]
// Every op has an instance name (scope + name, interned: records keep the pointer) and a call index
// (its n-th call in the process: what the comparator matches two runs by). Neither may take a
// global lock per op, profiled or not: host threads launching ops would queue on it. Each distinct
// instance name has one immortal InstanceName with an atomic call counter, created under the
// table's mutex the first time any thread sees the name; each thread caches name -> InstanceName*
// for itself, so a known name costs a thread-local hash lookup and one fetch_add. Indexes of one
// name are handed out in the order the fetch_adds happen, each once, as a mutex would hand them.
// The API name is the schema's, interned at registration (OpSchema::api_name). What the per-op path
// still locks is per device: the allocator for the outputs and the device's queue.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Every instance name seen in the process; its mutex is taken on a thread's first sight of a name
// and by reset_call_counters(), never on a cached name.
class InstanceNames {
 public:
  static InstanceNames& get() {
    static auto* names = new InstanceNames();  // immortal, like the interned strings records point to
    return *names;
  }
  InstanceName* find_or_add(std::string_view full) {
    std::lock_guard lock(mutex_);
    const auto it = by_name_.find(full);
    if (it != by_name_.end()) return it->second.get();
    const char* interned = intern(full);
    return by_name_.emplace(interned, std::make_unique<InstanceName>(interned)).first->second.get();
  }
  void reset_calls() {
    std::lock_guard lock(mutex_);
    for (auto& [name, entry] : by_name_) entry->calls.store(0, std::memory_order_relaxed);
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string_view, std::unique_ptr<InstanceName>> by_name_;  // keys: the interned text
};

// This thread's view of InstanceNames, and the buffer it spells scoped names in.
struct ThreadNames {
  std::unordered_map<std::string, InstanceName*, StringHash, std::equal_to<>> cache;
  std::string full;
};
thread_local ThreadNames t_names;

}  // namespace

InstanceName& instance_name(std::string_view op_type, const CallOptions& options) {
  const std::string_view base = options.name.empty() ? op_type : options.name;
  std::string_view full = base;
  if (const std::string& scope = thread_name_scope(); !scope.empty()) {
    t_names.full.assign(scope).append(1, '/').append(base);
    full = t_names.full;
  }
  if (const auto it = t_names.cache.find(full); it != t_names.cache.end()) [[likely]]
    return *it->second;
  InstanceName* entry = InstanceNames::get().find_or_add(full);
  t_names.cache.emplace(std::string(full), entry);
  return *entry;
}

namespace {

// Note [Signature cache]
// Each task a listener sees carries its inputs' and outputs' signatures as text, and spelling one
// (a to_string per dimension, the dtype and format names) and hashing the text took ~100 ns, twice
// per op, on the launching thread under `npuscope run` (samples/multi_stream: ~3 us an op in all).
// A thread keeps each signature under its tensors' raw description instead (per tensor a word of
// present, dtype, format, C0 and rank, then its dimensions) and first compares that with the last
// two it described (an op's inputs, then its outputs: a loop repeats them), so a known signature
// costs filling a few words and a compare. The text is spelled the first time a thread meets it.
class SignatureCache {
 public:
  // Starts a description: add() each tensor, then find() or keep().
  void begin() { words_.clear(); }
  void add(bool present, DType dtype, Format format, std::uint8_t c0, std::span<const std::int64_t> dims) {
    words_.push_back(static_cast<std::int64_t>(present) | static_cast<std::int64_t>(dtype) << 8 |
                     static_cast<std::int64_t>(format) << 16 | static_cast<std::int64_t>(c0) << 24 |
                     static_cast<std::int64_t>(dims.size()) << 32);
    words_.insert(words_.end(), dims.begin(), dims.end());
  }
  // The text of the description begun, or nullptr when this thread has not met it.
  const char* find() {
    const std::string_view raw = view();
    for (Recent& r : recent_) {
      if (r.raw == raw) return r.text;
    }
    const auto it = known_.find(raw);
    if (it == known_.end()) return nullptr;
    remember(raw, it->second);
    return it->second;
  }
  const char* keep(const char* text) {
    known_.emplace(std::string(view()), text);
    remember(view(), text);
    return text;
  }

 private:
  struct Recent {
    std::string raw;
    const char* text = nullptr;
  };
  std::string_view view() const {
    return {reinterpret_cast<const char*>(words_.data()), words_.size() * sizeof(std::int64_t)};
  }
  void remember(std::string_view raw, const char* text) {
    Recent& r = recent_[next_];
    r.raw.assign(raw);  // keeps its buffer
    r.text = text;
    next_ ^= 1;
  }

  std::vector<std::int64_t> words_;
  Recent recent_[2];
  std::size_t next_ = 0;
  std::unordered_map<std::string, const char*, StringHash, std::equal_to<>> known_;
};

thread_local SignatureCache t_signatures;

// The signature's text, interned.
const char* spell_signature(std::span<const TensorMeta> metas) {
  thread_local std::string text;
  text.clear();
  const auto each = [&](auto&& write) {
    for (std::size_t i = 0; i < metas.size(); ++i) {
      if (i > 0) text += ';';
      if (metas[i].present) write(metas[i]);
    }
  };
  const auto dims = [&](const Shape& shape) {
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (d > 0) text += ',';
      text += std::to_string(shape[d]);
    }
  };
  each([&](const TensorMeta& m) {
    if (is_private(m.format)) [[unlikely]]
      dims(storage_shape(m.format, m.shape, m.dtype, m.c0));
    else
      dims(m.shape);
  });
  text += '|';
  each([&](const TensorMeta& m) { text += dtype_name(m.dtype); });
  text += '|';
  each([&](const TensorMeta& m) {
    text += format_name(is_private(m.format) ? m.format : base_format(m.shape.size()));
    // A C0 other than the dtype's is what the profile marks with a sub-format: the pools' f32
    // "NC1HWC0:1" (C0 = 16), where the same pools' u16 mask (C0 = 16 too) is plain "NC1HWC0".
    if (m.c0 != 0 && m.c0 != c0_of(m.dtype)) text += ":1";
  });
  return intern(text);
}

}  // namespace

// Tensors as "SHAPES|DTYPES|FORMATS" (Note [Input signature] in hook_api.h), interned: only built for
// a listener, and cached by the thread (Note [Signature cache]). A tensor with a private format tag
// shows its storage shape (Note [Private formats] in formats.h).
const char* signature(std::span<const TensorMeta> metas) {
  SignatureCache& cache = t_signatures;
  cache.begin();
  for (const TensorMeta& m : metas) cache.add(m.present, m.dtype, m.format, m.c0, m.shape);
  if (const char* text = cache.find()) [[likely]]
    return text;
  return cache.keep(spell_signature(metas));
}

void fill_metas(const std::vector<Tensor>& tensors, std::vector<TensorMeta>& out) {
  out.resize(tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    TensorMeta& m = out[i];
    m.present = tensors[i].defined();
    if (m.present) {
      m.shape.assign(tensors[i].shape().begin(), tensors[i].shape().end());  // keeps the buffer
      m.dtype = tensors[i].dtype();
    } else {
      m.shape.clear();
      m.dtype = DType::kF32;
    }
    m.format = Format::kND;  // tags are read where they matter (read_format_tags)
    m.c0 = 0;
  }
}

// signature() of tensors, through a buffer of this thread's (built for a listener only).
const char* signature_of(const std::vector<Tensor>& tensors) {
  // Described as fill_metas() would describe them, without copying their shapes.
  SignatureCache& cache = t_signatures;
  cache.begin();
  for (const Tensor& t : tensors) {
    if (t.defined()) {
      cache.add(true, t.dtype(), Format::kND, 0, t.shape());
    } else {
      cache.add(false, DType::kF32, Format::kND, 0, {});
    }
  }
  if (const char* text = cache.find()) [[likely]]
    return text;
  thread_local std::vector<TensorMeta> metas;
  fill_metas(tensors, metas);
  return cache.keep(spell_signature(metas));
}

void reset_call_counters() { InstanceNames::get().reset_calls(); }

}  // namespace npuscope::emulator
