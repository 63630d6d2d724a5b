// kernel_pipes: custom kernels' pipe ratios (the op simulator's vec_ratio, mte2_ratio, ...) from
// KERNEL_BLOCK, per op type over every block of every launch, and the advice each pattern earns (a
// kernel that does not show the pattern gets none).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "kernel_trace_util.h"

using namespace npuscope;
using namespace npuscope::testing;
using analyzer::Report;
using analyzer::Table;
using analyzer::Value;

namespace {

// The kernel_pipes row of `op_type`; -1 if none.
int row_of(const Report& r, const std::string& op_type) {
  const Table& t = table(r, "kernel_pipes");
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (std::get<std::string>(*t.cell(i, "op_type")) == op_type) return static_cast<int>(i);
  }
  return -1;
}

double number(const Report& r, const std::string& op_type, std::string_view column) {
  const int row = row_of(r, op_type);
  EXPECT_GE(row, 0) << op_type;
  const Value* v = table(r, "kernel_pipes").cell(static_cast<std::size_t>(row), column);
  EXPECT_TRUE(v != nullptr && std::holds_alternative<double>(*v)) << op_type << "." << column;
  return v != nullptr && std::holds_alternative<double>(*v) ? std::get<double>(*v) : -1;
}

struct AdviceItem {
  std::string title, detail, action;
  std::int64_t impact_ns = 0;
};

// The kernel_pipes advice about `op_type` whose title has `what`.
std::vector<AdviceItem> advice(const Report& r, const std::string& op_type, const std::string& what) {
  std::vector<AdviceItem> out;
  const Table& t = table(r, "advice");
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& title = std::get<std::string>(*t.cell(i, "title"));
    if (std::get<std::string>(*t.cell(i, "rule")) != "kernel_pipes" || !title.starts_with(op_type + ": ") ||
        title.find(what) == std::string::npos)
      continue;
    out.push_back({title, std::get<std::string>(*t.cell(i, "detail")), std::get<std::string>(*t.cell(i, "action")),
                   std::get<std::int64_t>(*t.cell(i, "impact_ns"))});
  }
  return out;
}

class KernelPipes : public KernelTraceTest {};

TEST_F(KernelPipes, RatiosAreBusyCyclesOverTheBlocksCyclesSummedOverLaunches) {
  KernelTrace trace(path("t.db"));
  // Two launches of two blocks: 6000 cycles in all; VECTOR 3100, MTE2 2300, MTE3 900, SCALAR 300.
  trace.launch("VecKernel", 10'000,
               {block(1000, {.vec = 600, .scalar = 50, .mte2 = 300, .mte3 = 200}, 250),
                block(1000, {.vec = 500, .scalar = 50, .mte2 = 400, .mte3 = 100}, 300)});
  trace.launch("VecKernel", 20'000,
               {block(2000, {.vec = 1000, .scalar = 100, .mte2 = 800, .mte3 = 300}, 700),
                block(2000, {.vec = 1000, .scalar = 100, .mte2 = 800, .mte3 = 300}, 700)});
  // A cube kernel, less time in all: listed after.
  trace.launch("CubeKernel", 5'000,
               {block(4000, {.cube = 3000, .scalar = 40, .mte1 = 1000, .mte2 = 2000, .fixp = 400})});
  trace.task("Add", 3'000);  // a built-in op: no KERNEL_BLOCK rows, not listed
  trace.finish();
  const Report r = analyze_trace(path("t.db"), {"kernel_pipes"});
  const Table& t = table(r, "kernel_pipes");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(row_of(r, "VecKernel"), 0) << "most time first";
  EXPECT_EQ(std::get<std::int64_t>(*t.cell(0, "calls")), 2);
  EXPECT_EQ(std::get<std::int64_t>(*t.cell(0, "blocks")), 4);
  EXPECT_EQ(std::get<std::int64_t>(*t.cell(0, "avg_ns")), 15'000);
  EXPECT_EQ(std::get<std::int64_t>(*t.cell(0, "total_ns")), 30'000);
  EXPECT_DOUBLE_EQ(number(r, "VecKernel", "vec_ratio"), 3100.0 / 6000);
  EXPECT_DOUBLE_EQ(number(r, "VecKernel", "mte2_ratio"), 2300.0 / 6000);
  EXPECT_DOUBLE_EQ(number(r, "VecKernel", "mte3_ratio"), 900.0 / 6000);
  EXPECT_DOUBLE_EQ(number(r, "VecKernel", "scalar_ratio"), 300.0 / 6000);
  EXPECT_DOUBLE_EQ(number(r, "VecKernel", "cube_ratio"), 0);
  EXPECT_DOUBLE_EQ(number(r, "VecKernel", "mte1_ratio"), 0);
  EXPECT_DOUBLE_EQ(number(r, "VecKernel", "fixp_ratio"), 0);
  EXPECT_EQ(std::get<std::string>(*t.cell(0, "bound_pipe")), "VECTOR");
  // Overlap of MTE2 and VECTOR over the most they could (per block the smaller busy time).
  EXPECT_DOUBLE_EQ(number(r, "VecKernel", "mte2_vector_overlap"), 1950.0 / 2300);
  EXPECT_DOUBLE_EQ(number(r, "VecKernel", "ub_share"), 0.5);
  EXPECT_DOUBLE_EQ(number(r, "VecKernel", "instructions_per_block"), 8);
  EXPECT_DOUBLE_EQ(number(r, "VecKernel", "unaligned_copy_share"), 0);
  EXPECT_EQ(std::get<std::int64_t>(*t.cell(0, "slowest_task_id")), 2);

  EXPECT_DOUBLE_EQ(number(r, "CubeKernel", "cube_ratio"), 0.75);
  EXPECT_DOUBLE_EQ(number(r, "CubeKernel", "mte1_ratio"), 0.25);
  EXPECT_DOUBLE_EQ(number(r, "CubeKernel", "fixp_ratio"), 0.1);
  EXPECT_EQ(std::get<std::string>(*t.cell(1, "bound_pipe")), "CUBE");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*t.cell(1, "mte2_vector_overlap"))) << "VECTOR never ran";
  // Neither shows a pattern: no advice.
  EXPECT_TRUE(table(r, "advice").rows.empty());
}

TEST_F(KernelPipes, ASerialisedKernelIsToldToDoubleBufferAndAnOverlappedOneIsNot) {
  KernelTrace trace(path("t.db"));
  // MTE2 and VECTOR each 40 % of the block: one overlaps 0 cycles of the 400 it could, one 200.
  trace.launch("Serial", 10'000,
               {block(1000, {.vec = 400, .scalar = 20, .mte2 = 400, .mte3 = 100}, 0),
                block(1000, {.vec = 400, .scalar = 20, .mte2 = 400, .mte3 = 100}, 0)});
  trace.launch("Overlapped", 10'000,
               {block(1000, {.vec = 400, .scalar = 20, .mte2 = 400, .mte3 = 100}, 200),
                block(1000, {.vec = 400, .scalar = 20, .mte2 = 400, .mte3 = 100}, 200)});
  // Just under a tenth of what it could: still serialised.
  trace.launch("Barely", 10'000, {block(1000, {.vec = 400, .scalar = 20, .mte2 = 400, .mte3 = 100}, 39)});
  trace.finish();
  const Report r = analyze_trace(path("t.db"), {"kernel_pipes"});
  const auto serial = advice(r, "Serial", "double-buffered");
  ASSERT_EQ(serial.size(), 1u) << text_of(r);
  EXPECT_EQ(serial[0].title, "Serial: MTE2 and VECTOR run one after the other (not double-buffered)");
  EXPECT_NE(serial[0].action.find("pipe.InitBuffer(queue, 2, bytes)"), std::string::npos) << serial[0].action;
  EXPECT_NE(serial[0].detail.find("mte2_ratio 0.40 and vec_ratio 0.40"), std::string::npos) << serial[0].detail;
  // At stake: the 400 of 1000 cycles per block they could have overlapped, of its 10 us.
  EXPECT_EQ(serial[0].impact_ns, 4'000);
  EXPECT_TRUE(advice(r, "Overlapped", "").empty());
  EXPECT_EQ(advice(r, "Barely", "double-buffered").size(), 1u);
  EXPECT_DOUBLE_EQ(number(r, "Overlapped", "mte2_vector_overlap"), 0.5);
}

TEST_F(KernelPipes, ATailBlockIsNamed) {
  KernelTrace trace(path("t.db"));
  const Busy busy{.vec = 500, .scalar = 10, .mte2 = 300};
  // Block 3 of 4 takes twice the median block: 1000 cycles (500 ns) more.
  trace.launch("Tail", 10'000,
               {block(1000, busy, 250), block(1000, busy, 250), block(1000, busy, 250), block(2000, busy, 250)});
  const std::int64_t tail_task = trace.launch(
      "Tail", 10'000, {block(1000, busy, 250), block(1000, busy, 250), block(1000, busy, 250), block(2400, busy, 250)});
  trace.launch("Tail", 10'000, {block(1000, busy, 250), block(1000, busy, 250)});  // no tail
  // 1.4x the median: not a tail. One block: nothing to compare.
  trace.launch("Even", 10'000,
               {block(1000, busy, 250), block(1000, busy, 250), block(1000, busy, 250), block(1400, busy, 250)});
  trace.launch("Single", 10'000, {block(5000, busy, 250)});
  // Two of six blocks twice the median: uneven tiling, both named by their count.
  trace.launch("Uneven", 10'000,
               {block(2000, busy, 250), block(2000, busy, 250), block(1000, busy, 250), block(1000, busy, 250),
                block(1000, busy, 250), block(1000, busy, 250)});
  trace.finish();
  const Report r = analyze_trace(path("t.db"), {"kernel_pipes"});
  const auto tail = advice(r, "Tail", "tail block");
  ASSERT_EQ(tail.size(), 1u) << text_of(r);
  EXPECT_EQ(tail[0].title, "Tail: block 3 runs 2.40x the median block (a tail block)") << "the worst launch";
  EXPECT_NE(tail[0].detail.find("in task " + std::to_string(tail_task) + " (Tail_" + std::to_string(tail_task) +
                                "), block 3 on core 3 took 2,400 cycles, the median block 1,000"),
            std::string::npos)
      << tail[0].detail;
  EXPECT_NE(tail[0].detail.find("2 of 3 launches"), std::string::npos) << tail[0].detail;
  EXPECT_NE(tail[0].action.find("balance the tiling"), std::string::npos);
  EXPECT_EQ(tail[0].impact_ns, 500 + 700) << "each tail's cycles beyond the median, at 2 cycles per ns";
  EXPECT_EQ(
      std::get<std::int64_t>(*table(r, "kernel_pipes").cell(static_cast<std::size_t>(row_of(r, "Tail")), "tail_calls")),
      2);
  EXPECT_TRUE(advice(r, "Even", "").empty());
  EXPECT_TRUE(advice(r, "Single", "").empty());
  const auto uneven = advice(r, "Uneven", "tail blocks");
  ASSERT_EQ(uneven.size(), 1u) << text_of(r);
  EXPECT_EQ(uneven[0].title, "Uneven: 2 of its 6 blocks run up to 2.00x the median block (tail blocks)");
  EXPECT_NE(uneven[0].detail.find("block 0 on core 0 took 2,000 cycles"), std::string::npos) << uneven[0].detail;
  EXPECT_NE(uneven[0].detail.find("1 of 1 launch has"), std::string::npos) << uneven[0].detail;
}

TEST_F(KernelPipes, MisalignedCopiesAreCounted) {
  KernelTrace trace(path("t.db"));
  KernelBlockRow b = block(1000, {.vec = 500, .scalar = 10, .mte2 = 300, .mte3 = 100}, 250);
  b.gm_copies = 8;
  b.unaligned_gm_copies = 2;
  trace.launch("Unaligned", 10'000, {b, b});
  trace.launch("Aligned", 10'000, {block(1000, {.vec = 500, .scalar = 10, .mte2 = 300, .mte3 = 100}, 250)});
  // One unaligned tail among 12 copies per block (8 %): what a length that is not a multiple of 16
  // costs, copied with DataCopyPad; not worth advice.
  KernelBlockRow tail = b;
  tail.gm_copies = 12;
  tail.unaligned_gm_copies = 1;
  trace.launch("OneTail", 10'000, {tail, tail});
  trace.finish();
  const Report r = analyze_trace(path("t.db"), {"kernel_pipes"});
  EXPECT_TRUE(advice(r, "OneTail", "").empty()) << text_of(r);
  const auto unaligned = advice(r, "Unaligned", "32-byte aligned");
  ASSERT_EQ(unaligned.size(), 1u) << text_of(r);
  EXPECT_EQ(unaligned[0].title, "Unaligned: 25.0 % of its GM copies are not 32-byte aligned");
  EXPECT_NE(unaligned[0].detail.find("4 of 16 copies"), std::string::npos) << unaligned[0].detail;
  EXPECT_NE(unaligned[0].action.find("align the tile lengths and GM offsets to 32 bytes"), std::string::npos);
  // A quarter of the copies, which keep MTE2 and MTE3 busy 40 % of the blocks: 10 % of 10 us.
  EXPECT_EQ(unaligned[0].impact_ns, 1'000);
  EXPECT_DOUBLE_EQ(number(r, "Unaligned", "unaligned_copy_share"), 0.25);
  EXPECT_TRUE(advice(r, "Aligned", "").empty());
}

TEST_F(KernelPipes, AScalarBoundKernelIsToldToUseLargerInstructions) {
  KernelTrace trace(path("t.db"));
  KernelBlockRow b = block(1000, {.vec = 200, .scalar = 700, .mte2 = 100, .mte3 = 50});
  b.instructions = 700;
  trace.launch("Scalar", 10'000, {b});
  // Scalar over half, but VECTOR busier: bound by VECTOR, not scalar.
  trace.launch("VectorFirst", 10'000, {block(1000, {.vec = 800, .scalar = 600, .mte2 = 100}, 100)});
  trace.finish();
  const Report r = analyze_trace(path("t.db"), {"kernel_pipes"});
  const auto scalar = advice(r, "Scalar", "scalar unit");
  ASSERT_EQ(scalar.size(), 1u) << text_of(r);
  EXPECT_EQ(scalar[0].title, "Scalar: bound by the scalar unit (scalar_ratio 0.70)");
  EXPECT_NE(scalar[0].detail.find("700.00 instructions per block"), std::string::npos) << scalar[0].detail;
  EXPECT_NE(scalar[0].action.find("larger repeats"), std::string::npos) << scalar[0].action;
  EXPECT_EQ(scalar[0].impact_ns, 5'000) << "SCALAR's lead over VECTOR: 0.5 of the blocks";
  EXPECT_EQ(std::get<std::string>(
                *table(r, "kernel_pipes").cell(static_cast<std::size_t>(row_of(r, "Scalar")), "bound_pipe")),
            "SCALAR");
  EXPECT_TRUE(advice(r, "VectorFirst", "scalar").empty());
}

TEST_F(KernelPipes, ALittleUsedUbIsReportedWhenMte2OrScalarBound) {
  KernelTrace trace(path("t.db"));
  const auto small_tiles = [](Busy busy, std::int64_t ub_bytes, std::int64_t instructions) {
    KernelBlockRow b = block(1000, busy, 50);
    b.ub_bytes = ub_bytes;
    b.instructions = instructions;
    return b;
  };
  const Busy mte2_bound{.vec = 100, .scalar = 64, .mte2 = 900, .mte3 = 300};
  trace.launch("SmallTiles", 10'000, {small_tiles(mte2_bound, 16'384, 64), small_tiles(mte2_bound, 8'192, 64)});
  trace.launch("BigTiles", 10'000, {small_tiles(mte2_bound, 65'536, 64)});  // a third of the UB
  trace.launch("FewTiles", 10'000, {small_tiles(mte2_bound, 16'384, 8)});   // 2 tiles: little to gain
  trace.launch("NoUb", 10'000, {small_tiles(mte2_bound, 0, 64)});           // a cube kernel: L1 and L0
  trace.launch("VectorBound", 10'000,                                       // bigger tiles change little
               {small_tiles({.vec = 900, .scalar = 64, .mte2 = 300}, 16'384, 64)});
  trace.finish();
  const Report r = analyze_trace(path("t.db"), {"kernel_pipes"});
  const auto ub = advice(r, "SmallTiles", "of the UB");
  ASSERT_EQ(ub.size(), 1u) << text_of(r);
  EXPECT_EQ(ub[0].title, "SmallTiles: its buffers use 8.3 % of the UB, and it is MTE2-bound");
  EXPECT_NE(ub[0].detail.find("at most 16.0 KiB of 192.0 KiB per block, 64.00 instructions per block, "
                              "mte2_ratio 0.90"),
            std::string::npos)
      << ub[0].detail;
  EXPECT_NE(ub[0].action.find("make the tiles bigger"), std::string::npos) << ub[0].action;
  EXPECT_EQ(ub[0].impact_ns, 6'000) << "MTE2's lead over MTE3: 0.6 of the blocks";
  EXPECT_DOUBLE_EQ(number(r, "SmallTiles", "ub_share"), 16'384.0 / 196'608);
  for (const char* other : {"BigTiles", "FewTiles", "NoUb", "VectorBound"}) {
    EXPECT_TRUE(advice(r, other, "UB").empty()) << other;
  }
}

TEST_F(KernelPipes, ATraceWithoutCustomKernelsGetsNothingFromTheRule) {
  KernelTrace trace(path("t.db"));
  trace.task("Add", 3'000);
  trace.task("MatMul", 30'000);
  trace.finish();
  const Report r = analyze_trace(path("t.db"), {"kernel_pipes", "kernel_sanitizer"});
  EXPECT_TRUE(table(r, "kernel_pipes").rows.empty());
  EXPECT_TRUE(table(r, "advice").rows.empty());
  EXPECT_TRUE(r.notes.empty());
  // Its text is the summary's alone.
  EXPECT_EQ(text_of(r), text_of(analyze_trace(path("t.db"), {"summary"})));
}

TEST_F(KernelPipes, NpuscopeAnalyzeWritesTheTableAndTheAdvice) {
  KernelTrace trace(path("t.db"));
  trace.launch("Serial", 10'000,
               {block(1000, {.vec = 400, .scalar = 20, .mte2 = 400, .mte3 = 100}),
                block(1000, {.vec = 400, .scalar = 20, .mte2 = 400, .mte3 = 100})});
  trace.finish();
  auto r =
      run_command(npuscope_cmd("analyze " + path("t.db") + " --rules kernel_pipes --format json -o " + path("a.json")));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(read_file(path("a.json")));
  ASSERT_EQ(j["kernel_pipes"].size(), 1u) << j.dump();
  EXPECT_EQ(j["kernel_pipes"][0]["op_type"], "Serial");
  EXPECT_DOUBLE_EQ(j["kernel_pipes"][0]["vec_ratio"].get<double>(), 0.4);
  EXPECT_EQ(j["kernel_pipes"][0]["bound_pipe"], "VECTOR") << "a tie goes to the first in Pipe order";
  ASSERT_EQ(j["advice"].size(), 1u);
  EXPECT_EQ(j["advice"][0]["rule"], "kernel_pipes");
  r = run_command(npuscope_cmd("analyze " + path("t.db") + " --format csv -o " + path("csv")));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(read_file(path("csv/kernel_pipes.csv"))
                  .starts_with("op_type,calls,blocks,avg_ns,total_ns,vec_ratio,cube_ratio,scalar_ratio,mte1_ratio,"
                               "mte2_ratio,mte3_ratio,fixp_ratio,bound_pipe,"));
  r = run_command(npuscope_cmd("analyze " + path("t.db")));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Custom kernels' pipe utilisation"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[kernel_pipes] Serial: MTE2 and VECTOR run one after the other"), std::string::npos)
      << r.output;
}

}  // namespace
