// The names, call indexes and signatures of the tasks the dispatcher launches (Note [Instance names
// without a lock] in launch_names.cpp; Note [Input signature] in hook_api.h). Private to the emulator.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/op_registry.h"
#include "npuscope/emulator/tensor.h"

namespace npuscope::emulator {

// An instance name (scope + name, interned) and its call counter.
struct InstanceName {
  explicit InstanceName(const char* interned) : name(interned) {}
  const char* const name;
  std::atomic<std::uint32_t> calls{0};
};

// The instance of `op_type` (or options.name) under this thread's name scope.
InstanceName& instance_name(std::string_view op_type, const CallOptions& options);

// Tensors as "SHAPES|DTYPES|FORMATS", interned (built for a listener only).
const char* signature(std::span<const TensorMeta> metas);
// The metas of `tensors` into `out`, reusing its buffers; formats are ND (tags are read where they matter).
void fill_metas(const std::vector<Tensor>& tensors, std::vector<TensorMeta>& out);
// signature() of tensors, through a buffer of this thread's.
const char* signature_of(const std::vector<Tensor>& tensors);

}  // namespace npuscope::emulator
