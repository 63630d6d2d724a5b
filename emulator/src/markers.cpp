#include "npuscope/emulator/markers.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "npuscope/emulator/virtual_clock.h"
#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::emulator {

const char* intern(std::string_view s) {
  static std::mutex mutex;
  static auto* pool = new std::unordered_set<std::string>();  // immortal: records outlive statics
  std::lock_guard lock(mutex);
  return pool->emplace(s).first->c_str();
}

const char* intern_cached(std::string_view s) {
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
  };
  thread_local std::unordered_map<std::string, const char*, Hash, std::equal_to<>> cache;
  if (const auto it = cache.find(s); it != cache.end()) [[likely]]
    return it->second;
  const char* interned = intern(s);
  cache.emplace(std::string(s), interned);
  return interned;
}

namespace {
void emit_marker(const char* name, std::int64_t step, hooks::MarkerEvent kind) {
  if (const auto* s = hooks::subscriber()) [[unlikely]] {
    if (s->on_marker) s->on_marker(s->user, {vclock::host_now_ns(), name, step, vclock::thread_index(), kind});
  }
}
}  // namespace

void range_push(std::string_view name) {
  if (hooks::subscriber() != nullptr) [[unlikely]]
    emit_marker(intern(name), -1, hooks::MarkerEvent::kRangePush);
}
void range_pop() { emit_marker(nullptr, -1, hooks::MarkerEvent::kRangePop); }
void step_begin(std::int64_t step) { emit_marker(nullptr, step, hooks::MarkerEvent::kStepBegin); }
void step_end() { emit_marker(nullptr, -1, hooks::MarkerEvent::kStepEnd); }

}  // namespace npuscope::emulator
