// msprobe's dump of a PyTorch script, recorded under `npuscope run --dump` (npuscope/_msprobe.py):
// the device side of Note [msprobe fragments].
//
// Note [msprobe fragments]
// msprobe's L1 dump wraps the Python APIs (torch.nn.functional, torch.Tensor's methods, torch's
// functions, torch.distributed) and records each outermost call's arguments and results, the
// gradients its output's autograd node received and produced, and, with L0, each module's call, the
// gradients of its inputs and outputs, and its parameters' gradients. npuscope.torch does the same
// when the script runs under `npuscope run --dump`, but records no statistics in Python: each call
// and each gradient hook becomes a host op of kind `api` (PYTORCH_API), a fragment of an msprobe
// entry, with
//  - its entry's name: "Functional.conv2d.0.forward" (n counts the API's outermost calls in the step,
//    restarting at every step boundary as module call numbers do), "Functional.conv2d.0.backward",
//    "Module.fc.Linear.backward.0", "Module.fc.Linear.parameters_grad.0";
//  - its arguments and results as JSON, as msprobe's dump.json holds them (input_args, input_kwargs,
//    output; input and output for a backward; {param: [tensor]} for parameters' gradients), every
//    tensor with its dtype, shape, requires_grad and the address of its first element as the kernels
//    see it (TENSOR.address: Tensor.data_ptr()) instead of statistics;
//  - its Python call stack (PYTORCH_API.stack_id).
// A forward call is a range around the aten ops it ran; a gradient hook a range of no length where
// the backward pass was. The analyzer reads each tensor's statistics (and data) from the TENSOR rows
// of the kernels that read or wrote its buffer around that point (Note [msprobe dumps from a trace]
// in analyzer/msprobe_dump.h), and merges the fragments of one entry (the hooks of one module's
// gradients). A module call's range (kind module) gets its arguments the same way, when it returns.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <string>

#include "npuscope/emulator/host_ops.h"
#include "npuscope/emulator/markers.h"
#include "npuscope/emulator/training_records.h"
#include "profiler_observers.h"

namespace npuscope::pytorch {
namespace {

const char* optional_text(const std::string& s) { return s.empty() ? nullptr : emulator::intern_cached(s); }

// Opens an API call's fragment, "{prefix}.{n}.forward"; returns its op id.
std::int64_t api_begin(const std::string& prefix) {
  open_observed_step();
  emulator::HostOpBegin op;
  op.kind = HostOpKind::kApi;
  op.pass = emulator::current_host_pass();
  op.name = api_entry(emulator::intern_cached(prefix));
  return static_cast<std::int64_t>(emulator::host_op_begin(op));
}

// Gives op `id` (an API call's or a module call's, open on this thread) its arguments and stack, and
// closes it; returns its name ("" if it is not open).
std::string api_end(std::int64_t id, const std::string& args, const std::string& stack) {
  const auto op = static_cast<std::uint64_t>(id);
  // Each call's arguments are its own (tensor addresses): interned without the per-thread cache.
  const char* name =
      emulator::host_op_describe(op, args.empty() ? nullptr : emulator::intern(args), optional_text(stack));
  emulator::host_op_end(op);
  return name == nullptr ? std::string() : std::string(name);
}

// A fragment of no length: a gradient hook's ("Functional.conv2d.0.backward", ...).
void fragment(const std::string& name, const std::string& args, const std::string& stack) {
  emulator::HostOpBegin op;
  op.kind = HostOpKind::kApi;
  op.pass = ModelPass::kBackward;
  op.name = emulator::intern_cached(name);
  op.args = args.empty() ? nullptr : emulator::intern(args);
  op.stack = optional_text(stack);
  emulator::host_op_end(emulator::host_op_begin(op));
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(npuscope, m) {
  m.def("dump_requested() -> bool", [] { return emulator::profiler_wants_tensors(); });
  m.def("api_begin(str prefix) -> int", api_begin);
  m.def("api_end(int id, str args, str stack) -> str", api_end);
  m.def("fragment(str name, str args, str stack) -> ()", fragment);
}

}  // namespace npuscope::pytorch
