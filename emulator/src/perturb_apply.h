// The device worker's side of Note [Perturbation] (perturb.h). Private to the emulator.
#pragma once

#include <atomic>

#include "npuscope/emulator/op_registry.h"

namespace npuscope::emulator {

struct PerturbSet;  // the published rules and their counters (perturb.cpp)

namespace detail {
extern std::atomic<const PerturbSet*> g_perturbations;
}

// Null when no rule is set: the only cost a task pays then.
inline const PerturbSet* active_perturbations() noexcept {
  return detail::g_perturbations.load(std::memory_order_acquire);
}

// Applies every rule matching `op_name` to the kernel's floating outputs, counts what it did, and
// sets ctx.overflow when it left an output non-finite. Throws nothing but std::bad_alloc.
void apply_perturbations(const PerturbSet& set, const char* op_name, KernelContext& ctx);

}  // namespace npuscope::emulator
