// Synthetic traces of custom (opkit) kernels for the analyzer's kernel rules: launches (TASK rows)
// with their KERNEL_BLOCK and KERNEL_FINDING rows, written through collector::TraceWriter, and the
// analysis of one through analyzer::analyze, as `npuscope analyze` runs it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "collector/export_test_util.h"
#include "npuscope/analyzer/analyze.h"
#include "npuscope/analyzer/format.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_writer.h"

namespace npuscope::testing {

using collector::KernelBlockRow;
using collector::KernelFindingRow;

// A fixture with a private temporary directory, removed afterwards.
using KernelTraceTest = collector::testing::ExportTest;

// The table `name` of a report (a test failure if it is missing).
inline const analyzer::Table& table(const analyzer::Report& r, std::string_view name) {
  const analyzer::Table* t = r.find(name);
  EXPECT_NE(t, nullptr) << name;
  return *t;
}

// Busy cycles per pipe of one block.
struct Busy {
  std::int64_t vec = 0, cube = 0, scalar = 0, mte1 = 0, mte2 = 0, mte3 = 0, fixp = 0;
};

// A block of `cycles` cycles (at 2 GHz: cycles / 2 ns) with half of a 192 KiB UB in use, 8
// instructions and 4 aligned GM copies, unless a test says otherwise.
inline KernelBlockRow block(std::int64_t cycles, Busy b, std::int64_t mte2_vector_overlap = 0) {
  KernelBlockRow r;
  r.cycles = cycles;
  r.vector_cycles = b.vec;
  r.cube_cycles = b.cube;
  r.scalar_cycles = b.scalar;
  r.mte1_cycles = b.mte1;
  r.mte2_cycles = b.mte2;
  r.mte3_cycles = b.mte3;
  r.fixp_cycles = b.fixp;
  r.mte2_vector_overlap_cycles = mte2_vector_overlap;
  r.instructions = 8;
  r.gm_copies = 4;
  r.ub_bytes = 98'304;
  r.ub_capacity = 196'608;
  return r;
}

// Builds a trace: launches one after another on npu:0 stream 0, then written by finish().
class KernelTrace {
 public:
  explicit KernelTrace(const std::string& path) : writer_(collector::TraceWriter::create(path)) {}

  // A launch of `op_type` ("<op_type>_<n>" its op name) lasting `ns`, with these blocks (task id,
  // block index, core and times filled in: block i on core i, from the launch's start); its task id.
  std::int64_t launch(const std::string& op_type, std::int64_t ns, std::vector<KernelBlockRow> blocks) {
    const std::int64_t id = task(op_type, ns);
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      KernelBlockRow b = blocks[i];
      b.task_id = id;
      b.block = b.core = static_cast<std::int32_t>(i);
      b.start_ns = tasks_.back().start_ns;
      b.end_ns = b.start_ns + b.cycles / 2;
      blocks_.push_back(b);
    }
    return id;
  }
  // A kernel task without KERNEL_BLOCK rows (a built-in op).
  std::int64_t task(const std::string& op_type, std::int64_t ns) {
    collector::TaskRow t;
    t.task_id = static_cast<std::int64_t>(tasks_.size()) + 1;
    t.queued_ns = t.start_ns = at_;
    t.end_ns = at_ + ns;
    t.name_id = writer_->intern(op_type + "_" + std::to_string(t.task_id));
    t.op_type_id = writer_->intern(op_type);
    t.task_type = static_cast<std::int32_t>(TaskType::kAiVectorCore);
    t.block_dim = 48;
    t.connection_id = t.task_id;
    tasks_.push_back(t);
    at_ += ns + 1'000;
    return t.task_id;
  }
  // A sanitizer finding in a launch; block -1: about the launch as a whole.
  void finding(std::int64_t task_id, const std::string& kernel, KernelCheck check, std::int32_t block,
               const std::string& instruction, const std::string& file, std::int32_t line, const std::string& message) {
    KernelFindingRow f;
    f.task_id = task_id;
    f.check_kind = static_cast<std::int32_t>(check);
    f.block = block;
    f.kernel_id = writer_->intern(kernel);
    f.instruction_id = writer_->intern(instruction);
    f.file_id = writer_->intern(file);
    f.line = line;
    f.message_id = writer_->intern(message);
    findings_.push_back(f);
  }
  void finish() {
    writer_->add(tasks_);
    writer_->add(blocks_);
    writer_->add(findings_);
    writer_->finalize();
  }

 private:
  std::unique_ptr<collector::TraceWriter> writer_;
  std::vector<collector::TaskRow> tasks_;
  std::vector<KernelBlockRow> blocks_;
  std::vector<KernelFindingRow> findings_;
  std::int64_t at_ = 10'000;
};

inline analyzer::Report analyze_trace(const std::string& db, std::vector<std::string> rules) {
  const auto reader = collector::TraceReader::open(db);
  analyzer::AnalyzeOptions options;
  options.rules = std::move(rules);
  return analyzer::analyze(*reader, options);
}

inline std::string text_of(const analyzer::Report& r) {
  std::ostringstream out;
  analyzer::write_text(r, out);
  return out.str();
}

}  // namespace npuscope::testing
