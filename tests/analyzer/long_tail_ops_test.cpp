// long_tail_ops: an op type whose slowest call is far above its average is listed, in every format
// `npuscope analyze` writes; one whose calls are alike, or too few, is not.
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

class LongTailOps : public ExportTest {
 protected:
  // On npu:0 stream 0: 9 Adds of 2 us and one of 60 us (task 10, "blocks/Add_9"); 10 Muls of 2 us;
  // 3 Exps of 2 us and one of 60 us (too few calls to judge).
  std::string write_trace() {
    const std::string db = path("t.db");
    auto w = TraceWriter::create(db);
    std::vector<TaskRow> tasks;
    std::int64_t at = 1000, id = 0;
    const auto add = [&](const char* name, const char* type, std::int64_t ns) {
      ++id;
      TaskRow t = sample_task(id, 0, 0, at, at, at + ns, id);
      t.name_id = w->intern(name);
      t.op_type_id = w->intern(type);
      t.task_type = 1;
      tasks.push_back(t);
      at += ns + 500;
    };
    for (int i = 0; i < 9; ++i) add("blocks/Add", "Add", 2'000);
    add("blocks/Add_9", "Add", 60'000);
    for (int i = 0; i < 10; ++i) add("blocks/Mul", "Mul", 2'000);
    for (int i = 0; i < 3; ++i) add("blocks/Exp", "Exp", 2'000);
    add("blocks/Exp_3", "Exp", 60'000);
    w->add(tasks);
    w->finalize();
    return db;
  }
};

TEST_F(LongTailOps, TheSlowCallIsListedInJsonCsvAndText) {
  const std::string db = write_trace();
  auto r = run_command(npuscope_cmd("analyze " + db + " --format json -o " + path("a.json")));
  ASSERT_EQ(r.status, 0) << r.output;
  const json j = json::parse(read_file(path("a.json")));
  ASSERT_EQ(j["long_tail_ops"].size(), 1u) << j["long_tail_ops"].dump();
  const json& row = j["long_tail_ops"][0];
  EXPECT_EQ(row["op_type"], "Add");
  EXPECT_EQ(row["count"], 10);
  EXPECT_EQ(row["avg_ns"], (9 * 2'000 + 60'000) / 10);
  EXPECT_EQ(row["max_ns"], 60'000);
  EXPECT_EQ(row["excess_ns"], 60'000 - 7'800);
  EXPECT_EQ(row["slowest_op"], "blocks/Add_9");
  EXPECT_EQ(row["slowest_task_id"], 10);

  r = run_command(npuscope_cmd("analyze " + db + " --format csv -o " + path("csv")));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_file(path("csv/long_tail_ops.csv")),
            "op_type,core_type,count,avg_ns,max_ns,max_over_avg,excess_ns,slowest_op,slowest_task_id\n"
            "Add,AI_VECTOR_CORE,10,7800,60000,7.692307692,52200,blocks/Add_9,10\n");

  r = run_command(npuscope_cmd("analyze " + db));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Long-tail ops"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("blocks/Add_9"), std::string::npos) << r.output;

  // --rules chooses it like any other.
  r = run_command(npuscope_cmd("analyze " + db + " --rules long_tail_ops --format json -o " + path("b.json")));
  ASSERT_EQ(r.status, 0) << r.output;
  const json only = json::parse(read_file(path("b.json")));
  EXPECT_EQ(only["long_tail_ops"].size(), 1u);
  EXPECT_FALSE(only.contains("op_statistics"));
}

}  // namespace
