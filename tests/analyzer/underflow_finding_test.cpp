// The underflow finding (Note [First underflow] in analyzer/src/underflow.cpp): the first task in
// execution order whose results were flushed to zero, how many and what share of its output, and
// every underflowing task, in every format `npuscope analyze` writes; a trace without underflows
// has no such rows.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "collector/export_test_util.h"
#include "npuscope/collector/trace_writer.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;
using namespace npuscope::testing;
using nlohmann::json;

namespace {

class UnderflowFinding : public ExportTest {
 protected:
  // On npu:0: an Add that loses nothing, then "net/scale" (Mul, f16) flushing 300 of its 400
  // output elements (its TENSOR rows give the 400), then "net/scale_1" flushing 7 (no TENSOR rows).
  // `underflow` false: the same tasks with nothing flushed.
  std::string write_trace(bool underflow) {
    const std::string db = path(underflow ? "u.db" : "n.db");
    auto w = TraceWriter::create(db);
    std::vector<TaskRow> tasks;
    const auto add = [&](std::int64_t id, const char* name, const char* type, std::int64_t flushed,
                         std::int64_t subnormal) {
      TaskRow t = sample_task(id, 0, 0, 1000 * id, 1000 * id, 1000 * id + 500, id);
      t.name_id = w->intern(name);
      t.op_type_id = w->intern(type);
      t.task_type = 1;
      t.compute_dtype = static_cast<std::int32_t>(npuscope::DType::kF16);
      t.underflow = underflow ? flushed : 0;
      t.subnormal = underflow ? subnormal : 0;
      tasks.push_back(t);
    };
    add(1, "net/add", "Add", 0, 0);
    add(2, "net/scale", "Mul", 300, 5);
    add(3, "net/scale_1", "Mul", 7, 0);
    w->add(tasks);
    w->add(TensorRow{.task_id = 2, .role = 0, .idx = 0, .dtype = 0, .shape = "20,20", .numel = 400});
    w->add(TensorRow{.task_id = 2, .role = 1, .idx = 0, .dtype = 0, .shape = "20,20", .numel = 400});
    w->finalize();
    return db;
  }
};

}  // namespace

TEST_F(UnderflowFinding, TheFirstUnderflowingOpAndItsShareInJsonCsvAndText) {
  const std::string db = write_trace(true);
  auto r = run_command(npuscope_cmd("analyze " + db + " --format json -o " + path("a.json")));
  ASSERT_EQ(r.status, 0) << r.output;
  const json j = json::parse(read_file(path("a.json")));
  const json& s = j["underflow_summary"];
  EXPECT_EQ(s["count"], 2);
  EXPECT_EQ(s["flushed_elements"], 307);
  EXPECT_EQ(s["first_task_id"], 2);
  EXPECT_EQ(s["first_op_name"], "net/scale");
  EXPECT_EQ(s["first_op_type"], "Mul");
  EXPECT_EQ(s["first_compute_dtype"], "f16");
  EXPECT_EQ(s["first_flushed"], 300);
  EXPECT_DOUBLE_EQ(s["first_flushed_ratio"].get<double>(), 0.75);  // of its output only, not its input
  EXPECT_EQ(s["first_subnormal"], 5);
  ASSERT_EQ(j["underflows"].size(), 2u);
  EXPECT_EQ(j["underflows"][1]["op_name"], "net/scale_1");
  EXPECT_EQ(j["underflows"][1]["flushed"], 7);
  EXPECT_TRUE(j["underflows"][1]["flushed_ratio"].is_null()) << "no TENSOR rows: the share is unknown";

  r = run_command(npuscope_cmd("analyze " + db + " --format csv -o " + path("csv")));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(read_file(path("csv/underflows.csv")).find("net/scale_1"), std::string::npos);

  r = run_command(npuscope_cmd("analyze " + db));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("first underflowing op: net/scale"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("keep the first op in f32"), std::string::npos) << r.output;
  // An alert: before the details.
  EXPECT_LT(r.output.find("Underflows"), r.output.find("Op statistics")) << r.output;
}

TEST_F(UnderflowFinding, NoUnderflowNoRows) {
  const std::string db = write_trace(false);
  const auto r = run_command(npuscope_cmd("analyze " + db + " --rules underflow --format json -o " + path("a.json")));
  ASSERT_EQ(r.status, 0) << r.output;
  const json j = json::parse(read_file(path("a.json")));
  EXPECT_TRUE(j["underflow_summary"].is_null()) << j.dump();
  EXPECT_TRUE(j["underflows"].empty()) << j.dump();
}
