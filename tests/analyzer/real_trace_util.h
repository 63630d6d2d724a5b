// Traces shaped the way an import shapes a real profile (docs/import.md), written with the
// collector's writer: META source set, DEVICE_INFO with a real device's name and no emulator
// ceilings, absolute timestamps, host calls (CANN_API, cuda_runtime) joined to their tasks by
// connection id with TASK.queued_ns unknown (0), real task types (AI_CORE, AI_VECTOR_CORE, MIX_AIV,
// AI_CPU, KERNEL, MEMCPY, HCCL ops and their HCCL_TASK link tasks), TASK_PMU rows, step markers with
// the profile's own step numbers, framework ops (PYTORCH_API) with input shapes. The analyzer's
// tests of the tools on real data build on it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "npuscope/collector/trace_writer.h"

namespace npuscope::testing {

// An Ascend profile's clock: ns since the epoch (ProfilerStep#50 of the 910B job in shared/realdata).
inline constexpr std::int64_t kRealEpochNs = 1736410576386409710;

class RealTrace {
 public:
  // `source`: META source ("ascend_pytorch_profiler_db", "kineto", ...); `device`: DEVICE_INFO's
  // name ("Ascend910B3", "NVIDIA H100 80GB HBM3"), its core counts 0 unless given.
  RealTrace(const std::string& path, const std::string& source, const std::string& device, std::int32_t cube_cores = 0,
            std::int32_t vector_cores = 0)
      : w_(collector::TraceWriter::create(path, {.overwrite = true})) {
    w_->set_meta(collector::kMetaSource, source);
    w_->set_meta(collector::kMetaSourcePath, "/profiles/" + source);
    w_->add(collector::DeviceInfoRow{
        .device_id = 0, .name = device, .cube_cores = cube_cores, .vector_cores = vector_cores});
  }

  collector::TraceWriter& writer() { return *w_; }
  collector::StringId id(const std::string& s) { return w_->intern(s); }

  // Microseconds from kRealEpochNs, in ns on the trace's clock.
  static std::int64_t at_us(double us) { return kRealEpochNs + static_cast<std::int64_t>(us * 1000); }

  // A host call (CANN_API, cuda_runtime) [start, end] us launching what shares its connection id.
  void api(const std::string& name, double start_us, double end_us, std::int64_t connection) {
    w_->add(collector::ApiRow{.start_ns = at_us(start_us),
                              .end_ns = at_us(end_us),
                              .name_id = id(name),
                              .connection_id = connection,
                              .thread_id = 1});
  }

  struct Task {
    TaskType type = TaskType::kAiCore;
    std::string name, op_type;
    double start_us = 0, end_us = 0;
    std::int64_t connection = 0;  // 0: none
    std::int32_t stream = 0, block_dim = 0, device = 0;
    std::string input_shapes, input_dtypes, input_formats, output_shapes, output_formats;
    std::int64_t pytorch_api_id = 0;
    std::int32_t call_index = 0;
  };
  // Returns its task id. queued_ns is 0: an import does not know it.
  std::int64_t task(const Task& t) {
    collector::TaskRow r{.task_id = next_task_++, .start_ns = at_us(t.start_us), .end_ns = at_us(t.end_us)};
    r.device_id = t.device;
    r.stream_id = t.stream;
    r.name_id = id(t.name);
    r.op_type_id = t.op_type.empty() ? 0 : id(t.op_type);
    r.task_type = static_cast<std::int32_t>(t.type);
    r.connection_id = t.connection;
    r.block_dim = t.block_dim;
    r.call_index = t.call_index;
    r.input_shapes_id = t.input_shapes.empty() ? 0 : id(t.input_shapes);
    r.input_dtypes_id = t.input_dtypes.empty() ? 0 : id(t.input_dtypes);
    r.input_formats_id = t.input_formats.empty() ? 0 : id(t.input_formats);
    r.output_shapes_id = t.output_shapes.empty() ? 0 : id(t.output_shapes);
    r.output_formats_id = t.output_formats.empty() ? 0 : id(t.output_formats);
    r.pytorch_api_id = t.pytorch_api_id;
    w_->add(std::vector<collector::TaskRow>{r});
    return r.task_id;
  }

  void pmu(std::int64_t task_id, const std::string& metric, double value) {
    w_->add(collector::TaskPmuRow{.task_id = task_id, .name_id = id(metric), .value = value});
  }

  // ProfilerStep#N over [start, end] us on the host.
  void step(std::int64_t n, double start_us, double end_us) {
    w_->add(collector::MarkerRow{.start_ns = at_us(start_us),
                                 .end_ns = at_us(end_us),
                                 .name_id = id("ProfilerStep#" + std::to_string(n)),
                                 .thread_id = 1,
                                 .kind = static_cast<std::int32_t>(MarkerKind::kStep),
                                 .step = n});
  }

  // A framework op (an aten op unless `kind` says otherwise).
  void framework_op(std::int64_t op_id, const std::string& name, double start_us, double end_us,
                    const std::string& input_shapes = "", std::int64_t parent = 0,
                    HostOpKind kind = HostOpKind::kAtenOp) {
    w_->add(collector::PytorchApiRow{.id = op_id,
                                     .start_ns = at_us(start_us),
                                     .end_ns = at_us(end_us),
                                     .thread_id = 1,
                                     .name_id = id(name),
                                     .kind = static_cast<std::int32_t>(kind),
                                     .input_shapes_id = input_shapes.empty() ? 0 : id(input_shapes),
                                     .parent_id = parent});
  }

  void finalize() { w_->finalize(); }

 private:
  std::unique_ptr<collector::TraceWriter> w_;
  std::int64_t next_task_ = 1;
};

}  // namespace npuscope::testing
