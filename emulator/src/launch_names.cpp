// See launch_names.h.
#include "launch_names.h"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

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

// Tensors as "SHAPES|DTYPES|FORMATS" (Note [Input signature] in hook_api.h), interned: only built for
// a listener, and interned through the thread's cache (a training loop repeats a few hundred shapes).
// A tensor with a private format tag shows its storage shape (Note [Private formats] in formats.h).
const char* signature(std::span<const TensorMeta> metas) {
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
  return intern_cached(text);
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
  thread_local std::vector<TensorMeta> metas;
  fill_metas(tensors, metas);
  return signature(metas);
}

void reset_call_counters() { InstanceNames::get().reset_calls(); }

}  // namespace npuscope::emulator
