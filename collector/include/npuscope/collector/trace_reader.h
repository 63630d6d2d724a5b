// Reads a trace database: the typed API every tool uses (analyzer, comparator, exports, viewer).
// Tools never write SQL of their own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "npuscope/collector/trace_error.h"
#include "npuscope/collector/trace_rows.h"
#include "npuscope/collector/trace_stats.h"

namespace npuscope::collector {

// Device-task totals in one query (what `npuscope run` prints).
struct TaskSummary {
  std::int64_t tasks = 0;      // TASK rows
  std::int64_t overflows = 0;  // rows with overflow = 1
  std::int64_t first_start_ns = 0, last_end_ns = 0;
};

struct ReaderOptions {
  // PRAGMA quick_check on open: finds damage early, but reads the whole file (~0.3 s per 1M tasks).
  // Without it a truncated file is still refused on open (from its header), and other damage gives
  // a TraceError ("corrupt trace") when a read reaches it: what a tool that reads everything anyway
  // (analyze) can rely on.
  bool verify = true;
  // Columns the caller does not need, as "TABLE.column" (e.g. "TASK.emulation_ns"): they are not
  // read and their members read as 0 or empty, each saving ~5 % of the time of reading a wide table
  // for a tool that reads millions of rows. TASK's kernel columns (name, type, costs: Note [Kernel
  // table] in collector/src/schema.h) cost nothing and are kept. An unknown name is a TraceError.
  std::vector<std::string> skip_columns;
};

// Thread safety: one reader may be shared by any number of threads, and a row callback may call the
// reader again (from its own or another thread): queries take turns on the reader's one connection
// under a lock held while rows are read, never while a callback runs.
class TraceReader {
 public:
  // Opens read-only. Throws TraceError: missing file, not SQLite, not an npuscope trace (no META
  // with a schema_version), a schema newer than this build reads, or corruption found on open.
  static std::unique_ptr<TraceReader> open(const std::string& path, const ReaderOptions& options = {});
  virtual ~TraceReader() = default;

  virtual const std::string& path() const = 0;
  virtual std::optional<std::string> meta(const std::string& key) const = 0;
  virtual bool complete() const = 0;  // META.status == 'complete'
  virtual int schema_version() const = 0;
  // "" for id 0 or an unknown id.
  virtual const std::string& string(StringId id) const = 0;
  virtual std::vector<StatValue> stats() const = 0;
  virtual std::vector<DeviceInfoRow> devices() const = 0;

  // Rows in start-time order (tensors: by task, role, index). The callbacks stream large traces
  // without holding them; the vector forms are for small ones.
  virtual void for_each_task(const std::function<void(const TaskRow&)>& f) const = 0;
  virtual void for_each_api(const std::function<void(const ApiRow&)>& f) const = 0;
  virtual void for_each_memory(const std::function<void(const MemoryRow&)>& f) const = 0;
  virtual void for_each_memcpy(const std::function<void(const MemcpyRow&)>& f) const = 0;
  virtual void for_each_marker(const std::function<void(const MarkerRow&)>& f) const = 0;
  // PYTORCH_API rows in start order (none for a workload that is not a PyTorch script, or a trace
  // written before schema 6).
  virtual void for_each_pytorch_api(const std::function<void(const PytorchApiRow&)>& f) const = 0;
  // The PYTORCH_API row with this id (through its primary key); nullopt if none.
  virtual std::optional<PytorchApiRow> pytorch_api(std::int64_t id) const = 0;
  // GRADIENT, LOSS_SCALE (by time) and OP_CHECK (by task, output): empty unless recorded.
  virtual void for_each_gradient(const std::function<void(const GradientRow&)>& f) const = 0;
  virtual void for_each_loss_scale(const std::function<void(const LossScaleRow&)>& f) const = 0;
  virtual void for_each_op_check(const std::function<void(const OpCheckRow&)>& f) const = 0;
  // The opkit kernels' detail (Note [Kernel detail records] in hook_api.h), empty in a trace without
  // custom kernels or older than schema 9. KERNEL_BLOCK and KERNEL_FINDING by task, block;
  // PIPE_INSTRUCTION of one task (through its index) by block, pipe, start: what the viewer's pipe
  // lanes draw.
  virtual void for_each_kernel_block(const std::function<void(const KernelBlockRow&)>& f) const = 0;
  virtual void for_each_kernel_finding(const std::function<void(const KernelFindingRow&)>& f) const = 0;
  virtual void for_each_pipe_instruction_of(std::int64_t task_id,
                                            const std::function<void(const PipeInstructionRow&)>& f) const = 0;
  // A rank's communication (Note [Collective records] in hook_api.h), empty in a single-process trace
  // or one older than schema 10: communicators by id, collectives by start, links by task and peer.
  virtual void for_each_communicator(const std::function<void(const CommunicatorRow&)>& f) const = 0;
  virtual void for_each_communication(const std::function<void(const CommunicationRow&)>& f) const = 0;
  virtual void for_each_communication_link(const std::function<void(const CommunicationLinkRow&)>& f) const = 0;
  // with_data: also load (and decompress) dumped tensor bytes into TensorRow::data.
  virtual void for_each_tensor(bool with_data, const std::function<void(const TensorRow&)>& f) const = 0;

  std::vector<TaskRow> tasks() const;
  std::vector<ApiRow> apis() const;
  std::vector<MemoryRow> memory() const;
  std::vector<MemcpyRow> memcpys() const;
  std::vector<MarkerRow> markers() const;
  std::vector<PytorchApiRow> pytorch_apis() const;
  std::vector<GradientRow> gradients() const;
  std::vector<LossScaleRow> loss_scales() const;
  std::vector<OpCheckRow> op_checks() const;
  std::vector<KernelBlockRow> kernel_blocks() const;
  std::vector<KernelFindingRow> kernel_findings() const;
  std::vector<PipeInstructionRow> pipe_instructions_of(std::int64_t task_id) const;
  std::vector<CommunicatorRow> communicators() const;
  std::vector<CommunicationRow> communications() const;
  std::vector<CommunicationLinkRow> communication_links() const;
  std::vector<TensorRow> tensors(bool with_data) const;

  virtual std::int64_t count(const std::string& table) const = 0;  // rows in a table (TaskRow: "TASK")
  virtual TaskSummary task_summary() const = 0;

  // Tasks with from_ns <= start_ns < to_ns, in start order: a window of time (what a timeline shows),
  // or one part of a big trace read by several threads, each with its own reader.
  virtual void for_each_task_starting(std::int64_t from_ns, std::int64_t to_ns,
                                      const std::function<void(const TaskRow&)>& f) const = 0;
  // COMPARE_RESULT (by task, role, index): none in a trace never compared with --annotate.
  virtual void for_each_compare_result(const std::function<void(const CompareResultRow&)>& f) const = 0;
  // The tensors of one task (by role, index), through TENSOR's index: what a comparison reads op by
  // op. `f` may move the row (its data) away.
  virtual void for_each_tensor_of(std::int64_t task_id, bool with_data,
                                  const std::function<void(TensorRow&)>& f) const = 0;
  // The first and the last task start ({0, -1} without tasks), through the start_ns index: no scan.
  virtual std::pair<std::int64_t, std::int64_t> task_start_range() const = 0;
};

}  // namespace npuscope::collector
