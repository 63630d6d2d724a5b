#include "npuscope/emulator/markers.h"

#include <mutex>
#include <string>
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

void range_push(std::string_view name) {
  if (const auto* s = hooks::subscriber()) [[unlikely]] {
    if (s->on_marker) s->on_marker(s->user, {vclock::host_now_ns(), intern(name), vclock::thread_index(), 0});
  }
}

void range_pop() {
  if (const auto* s = hooks::subscriber()) [[unlikely]] {
    if (s->on_marker) s->on_marker(s->user, {vclock::host_now_ns(), nullptr, vclock::thread_index(), 1});
  }
}

}  // namespace npuscope::emulator
