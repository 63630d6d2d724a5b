// Emits the host API enter/exit records around one runtime call (aclnnMatMul, aclrtMemcpy...).
#pragma once

#include <cstdint>

#include "npuscope/emulator/virtual_clock.h"
#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::emulator {

std::uint64_t next_connection_id();

class ApiScope {
 public:
  // `name` must be a string literal or interned; `kind` says what the call does (API.kind).
  ApiScope(const char* name, ApiKind kind) : name_(name), connection_id_(next_connection_id()), kind_(kind) {
    if (const auto* s = hooks::subscriber(); s != nullptr && s->on_api != nullptr) [[unlikely]] {
      start_ns_ = vclock::host_now_ns();
      if (s->wants_api_enter)
        s->on_api(s->user, {start_ns_, connection_id_, name_, vclock::thread_index(), 0, 0, kind_});
    }
  }
  ~ApiScope() {
    if (const auto* s = hooks::subscriber(); s != nullptr && s->on_api != nullptr) [[unlikely]] {
      s->on_api(s->user, {vclock::host_now_ns(), connection_id_, name_, vclock::thread_index(), 1, start_ns_, kind_});
    }
  }
  ApiScope(const ApiScope&) = delete;
  ApiScope& operator=(const ApiScope&) = delete;
  std::uint64_t connection_id() const { return connection_id_; }

 private:
  const char* name_;
  std::uint64_t connection_id_;
  ApiKind kind_;
  std::uint64_t start_ns_ = 0;  // the enter's timestamp, for the exit record
};

}  // namespace npuscope::emulator
