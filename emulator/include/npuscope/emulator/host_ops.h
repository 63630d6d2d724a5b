// Framework ops on the host timeline: what a framework above the emulator (the PyTorch device's
// observers) says it is doing, so that a trace shows the aten ops, modules and passes above the
// device tasks they launched.
//
// Note [Host ops]
// A host op is a range on one host thread, opened by host_op_begin and closed by host_op_end in
// stack order (a RecordFunction's start and end callbacks, a module's forward pre-hook and hook).
// While one is open:
//  - every task the thread launches carries the innermost op's id (TaskRecord::host_op_id), which
//    is how the trace links an aten op to its kernels (msprof links torch ops to CANN tasks the same
//    way, through an id, not through timestamps: host time can stand still while ops nest);
//  - an op given a `scope` names the tasks launched inside it "scope/name" instead of "name" under
//    the NameScope the thread had: a module's msprobe entry ("Module.layer1.0.conv1.Conv2d.forward.0")
//    replaces its parent's, as msprobe names every module by its full path; the old scope returns
//    when the op ends.
// The op's HostOpRecord goes to the listener when it ends, with its start. Ids are per process,
// from 1. Ops left open by a thread that exits are never sent (a framework closes what it opens).
// Without a listener an op costs a push and a pop on a thread-local stack, but frameworks install
// their observers only when profiled (npuscope.torch does): an unprofiled script pays nothing.
#pragma once

#include <cstdint>
#include <string_view>

#include "npuscope/runtime_hooks/vocabulary.h"

namespace npuscope::emulator {

struct HostOpBegin {
  HostOpKind kind = HostOpKind::kAtenOp;
  ModelPass pass = ModelPass::kForward;
  const char* name = nullptr;             // interned (intern / intern_cached)
  const char* module = nullptr;           // interned msprobe module entry; null: the enclosing op's
  const char* scope = nullptr;            // interned; non-null: names the tasks launched inside (above)
  const char* input_signature = nullptr;  // interned "SHAPES|DTYPES" (Note [Input signature] in hook_api.h)
  const char* args = nullptr;             // interned; msprobe fragments' arguments (HostOpRecord::args)
  const char* stack = nullptr;            // interned Python call stack (HostOpRecord::stack)
  std::int64_t sequence_number = -1;      // autograd's, pairing a forward op with its backward
  std::int32_t fwd_thread_id = -1;        // backward functions: the forward op's thread; -1: this thread
};

// Opens an op on this thread; returns its id.
std::uint64_t host_op_begin(const HostOpBegin& op);
// Closes op `id` on this thread, and the ops still open inside it (one whose end was lost: an
// exception skipped a framework's end hook), reporting each. An id not open here does nothing.
void host_op_end(std::uint64_t id);
// Sets the arguments and stack (interned; null leaves one as it is) of op `id`, open on this thread:
// what a framework learns of a call only when it returns (its results). Returns the op's name; null
// (and nothing done) if `id` is not open here.
const char* host_op_describe(std::uint64_t id, const char* args, const char* stack);
// The innermost open op on this thread, a backward function without a module (the autograd engine's
// range around a node), takes `module` as its module and, from now on, as the scope of the tasks it
// launches: the node inside it knows its module, and what the engine runs after the node (the sum
// that reduces a broadcast bias's gradient) belongs to that module's backward too. Else nothing.
void host_op_adopt_module(const char* module);
// This thread's innermost open op (0 if none), its module (null if none) and its pass (forward if none).
std::uint64_t current_host_op() noexcept;
const char* current_host_module() noexcept;
ModelPass current_host_pass() noexcept;

}  // namespace npuscope::emulator
