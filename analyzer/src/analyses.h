// One function per finding; analyze.cpp runs the ones the options ask for.
#pragma once

#include <utility>
#include <vector>

#include "findings.h"
#include "tensor_shapes.h"
#include "trace_data.h"

#include "npuscope/analyzer/finding_table.h"

namespace npuscope::analyzer {

class RuleContext;

Summary summarize(const TraceData& data);

// Roofline (roofline.cpp).
TaskPerf task_perf(const TraceData& data, const Task& task);
std::vector<TaskPerf> top_ops(const TraceData& data, int top);
std::vector<BoundShare> bound_shares(const TraceData& data);

IdleReport idle_time(const TraceData& data, int top);
std::vector<FallbackOp> fallback_ops(const TraceData& data);
OverflowReport overflows(const TraceData& data);
MemoryReport memory_usage(const TraceData& data, int top);
// Custom kernels' pipe use per op type, most time first (kernel_pipes.cpp); `unmatched` counts the
// launches with KERNEL_BLOCK rows but no kernel task (a trace cut short).
std::vector<KernelPipes> kernel_pipes(const TraceData& data, std::int64_t& unmatched);

// "a -> b -> c" (advice.cpp): op names in an advice's text.
std::string join(const std::vector<std::string>& parts, const char* sep);

// The advice table all advice rules write (advice.cpp), most time at stake first.
extern const TableSpec kAdviceTable;
void add_advice(RuleContext& context, const std::vector<Advice>& advice);

// The advice rules (advice.cpp): each adds its items to `out`.
// Fusion (fusion.cpp, Note [Fusion chains]); `notes` says when the chain table filled up.
void advise_fusion(const TraceData& data, int top, std::vector<Advice>& out, std::vector<std::string>& notes);
void advise_cube_alignment(const TraceData& data, const TensorShapes& shapes, int top, std::vector<Advice>& out);
void advise_block_dim(const TraceData& data, int top, std::vector<Advice>& out);
void advise_synchronization(const TraceData& data, std::vector<Advice>& out);
void advise_small_memcpy(const TraceData& data, std::vector<Advice>& out);
void advise_dynamic_shapes(const TraceData& data, const TensorShapes& shapes, int top, std::vector<Advice>& out);

}  // namespace npuscope::analyzer
