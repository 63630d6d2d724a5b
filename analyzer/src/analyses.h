// One function per finding; analyze.cpp runs the ones the options ask for.
#pragma once

#include <utility>
#include <vector>

#include "npuscope/analyzer/report.h"
#include "tensor_shapes.h"
#include "trace_data.h"

namespace npuscope::analyzer {

Summary summarize(const TraceData& data);
std::vector<OpStat> op_statistics(const TraceData& data);

// Roofline (roofline.cpp).
TaskPerf task_perf(const TraceData& data, const TaskRow& task);
std::vector<TaskPerf> top_ops(const TraceData& data, int top);
std::vector<BoundShare> bound_shares(const TraceData& data);

IdleReport idle_time(const TraceData& data, int top);
std::vector<FallbackOp> fallback_ops(const TraceData& data);
OverflowReport overflows(const TraceData& data);
MemoryReport memory_usage(const TraceData& data, int top);

// The advice rules (advice.cpp): each adds its items to `out`.
void advise_fusion(const TraceData& data, int top, std::vector<Advice>& out);
void advise_cube_alignment(const TraceData& data, const TensorShapes& shapes, int top, std::vector<Advice>& out);
void advise_block_dim(const TraceData& data, int top, std::vector<Advice>& out);
void advise_synchronization(const TraceData& data, std::vector<Advice>& out);
void advise_small_memcpy(const TraceData& data, std::vector<Advice>& out);
void advise_dynamic_shapes(const TraceData& data, const TensorShapes& shapes, int top, std::vector<Advice>& out);

// Busy intervals of one device's kernels (sorted by start): overlapping ones merged.
std::vector<std::pair<std::int64_t, std::int64_t>> busy_intervals(const std::vector<const TaskRow*>& tasks);

}  // namespace npuscope::analyzer
