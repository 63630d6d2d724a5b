// See Note [Host ops] in host_ops.h.
#include "npuscope/emulator/host_ops.h"

#include <atomic>
#include <string>
#include <vector>

#include "name_scope.h"
#include "npuscope/emulator/virtual_clock.h"
#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::emulator {
namespace {

std::atomic<std::uint64_t> g_next_host_op{1};

struct OpenOp {
  hooks::HostOpRecord record;
  bool scoped = false;
  std::string outer_scope;  // the thread's scope before this op replaced it (scoped ops only)
};

// This thread's open ops, innermost last. Nesting is shallow (modules inside modules, an aten op
// inside another): the vector's capacity is reused op after op.
thread_local std::vector<OpenOp> t_open;

}  // namespace

std::uint64_t host_op_begin(const HostOpBegin& op) {
  const std::uint64_t id = g_next_host_op.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t thread = vclock::thread_index();
  OpenOp& open = t_open.emplace_back();
  hooks::HostOpRecord& r = open.record;
  r.id = id;
  r.parent_id = t_open.size() > 1 ? t_open[t_open.size() - 2].record.id : 0;
  r.start_ns = vclock::host_now_ns();
  r.name = op.name;
  r.module = op.module != nullptr ? op.module : (t_open.size() > 1 ? t_open[t_open.size() - 2].record.module : nullptr);
  r.input_signature = op.input_signature;
  r.args = op.args;
  r.stack = op.stack;
  r.sequence_number = op.sequence_number;
  r.thread_id = thread;
  r.fwd_thread_id = op.fwd_thread_id >= 0 ? static_cast<std::uint32_t>(op.fwd_thread_id) : thread;
  r.kind = op.kind;
  r.pass = op.pass;
  if (op.scope != nullptr) {
    std::string& scope = thread_name_scope();
    open.scoped = true;
    open.outer_scope.assign(scope);
    scope.assign(op.scope);
  }
  return id;
}

void host_op_end(std::uint64_t id) {
  std::size_t depth = t_open.size();
  while (depth > 0 && t_open[depth - 1].record.id != id) --depth;
  if (depth == 0) return;
  const std::uint64_t now = vclock::host_now_ns();
  const auto* s = hooks::subscriber();
  while (t_open.size() >= depth) {
    OpenOp& open = t_open.back();
    open.record.end_ns = now;
    if (open.scoped) thread_name_scope().swap(open.outer_scope);
    if (s != nullptr && s->on_host_op != nullptr) [[unlikely]]
      s->on_host_op(s->user, open.record);
    t_open.pop_back();
  }
}

const char* host_op_describe(std::uint64_t id, const char* args, const char* stack) {
  for (auto it = t_open.rbegin(); it != t_open.rend(); ++it) {
    if (it->record.id != id) continue;
    if (args != nullptr) it->record.args = args;
    if (stack != nullptr) it->record.stack = stack;
    return it->record.name;
  }
  return nullptr;
}

void host_op_adopt_module(const char* module) {
  if (t_open.empty() || module == nullptr) return;
  OpenOp& open = t_open.back();
  if (open.record.kind != HostOpKind::kBackwardFunction || open.record.module != nullptr) return;
  open.record.module = module;
  std::string& scope = thread_name_scope();
  if (!open.scoped) {
    open.scoped = true;
    open.outer_scope.assign(scope);
  }
  scope.assign(module);
}

std::uint64_t current_host_op() noexcept { return t_open.empty() ? 0 : t_open.back().record.id; }

const char* current_host_module() noexcept { return t_open.empty() ? nullptr : t_open.back().record.module; }

ModelPass current_host_pass() noexcept { return t_open.empty() ? ModelPass::kForward : t_open.back().record.pass; }

}  // namespace npuscope::emulator
