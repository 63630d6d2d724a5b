// The training tools' device side, for npuscope.torch: the grad probe's per-parameter gradient
// statistics and the loss scaler's decisions, sent to the profiler (GRADIENT, LOSS_SCALE in a trace).
#include <ATen/ATen.h>
#include <torch/library.h>

#include "npu_device.h"
#include "npuscope/emulator/markers.h"
#include "npuscope/emulator/training_records.h"
#include "profiler_observers.h"

namespace npuscope::pytorch {
namespace {

// One parameter's gradient, as the backward pass produced it (a tensor hook): its figures are read
// after the device finished computing it, on the host, so that the probe adds no task to the trace
// (but a wait: a probed run's timeline synchronises once per parameter).
void probe_gradient(const std::string& param, const at::Tensor& grad, double loss_scale) {
  if (!grad.defined() || !emulator::profiler_wants_gradients()) return;
  const std::optional<emulator::DType> dtype = to_emulator_dtype(grad.scalar_type());
  if (!dtype || !is_floating(*dtype)) return;
  const at::Tensor g = grad.contiguous();
  if (g.device().type() == kNpu) {
    NPUSCOPE_TORCH_TRY
    emulator_device(g.device().index()).synchronize();
    NPUSCOPE_TORCH_CATCH("npuscope.torch grad probe")
  }
  emulator::record_gradient(emulator::intern_cached(param), observed_step(),
                            emulator::gradient_stats(g.data_ptr(), *dtype, g.numel()), loss_scale);
}

void record_loss_scale(std::int64_t step, double scale, double next_scale, bool skipped) {
  emulator::record_loss_scale(step, scale, next_scale, skipped);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(npuscope, m) {
  m.def("grad_probe_requested() -> bool", [] { return emulator::profiler_wants_gradients(); });
  m.def("probe_gradient(str param, Tensor grad, float loss_scale) -> ()", probe_gradient);
  m.def("record_loss_scale(int step, float scale, float next_scale, bool skipped) -> ()", record_loss_scale);
  m.def("optimizer_step_skipped() -> ()", [] { optimizer_step_skipped(); });
}

}  // namespace npuscope::pytorch
