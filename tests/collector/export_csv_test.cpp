// msprof-style CSV export: exact file contents for the sample trace (see export_test_util.h).
#include "npuscope/collector/export_csv.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "collector/export_test_util.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_writer.h"

using namespace npuscope::collector;
using namespace npuscope::collector::testing;

namespace {

class CsvExportTest : public ExportTest {
 protected:
  CsvExportResult export_sample() {
    write_sample_trace(path("t.db"));
    const auto reader = TraceReader::open(path("t.db"));
    return export_csv(*reader, path("csv"));
  }
  std::string csv(const std::string& name) const { return read_text((dir_ / "csv" / name).string()); }
};

}  // namespace

TEST_F(CsvExportTest, ResultNamesTheFilesAndRowCounts) {
  const CsvExportResult r = export_sample();
  ASSERT_EQ(r.files.size(), 5u);
  const std::pair<const char*, std::int64_t> expected[] = {{"op_summary.csv", 4},
                                                           {"op_statistic.csv", 2},
                                                           {"api_statistic.csv", 4},
                                                           {"memory_record.csv", 2},
                                                           {"gradients.csv", 0}};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.files[i].path, path("csv/" + std::string(expected[i].first)));
    EXPECT_EQ(r.files[i].rows, expected[i].second) << expected[i].first;
    EXPECT_TRUE(std::filesystem::exists(r.files[i].path));
  }
}

TEST_F(CsvExportTest, OpSummaryIsExact) {
  export_sample();
  // Start-time order. Shapes and dtypes from TENSOR rows ("2,3;3,2"); the Add's name holds a comma
  // and quotes (RFC 4180 quoting); task 5 waited 100 ns after task 2 on stream 0; its output is a
  // scalar (empty shape).
  EXPECT_EQ(csv("op_summary.csv"),
            "Device_id,Model Name,Task ID,Stream ID,Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),"
            "Task Wait Time(us),Block Dim,Input Shapes,Input Data Types,Output Shapes,Output Data Types,FLOPs,Bytes,"
            "Overflow\n"
            "-1,N/A,4,0,layer0/attn/MatMul,MatMul,HOST_CPU,1.200,0.700,0.000,1,\"2,3;3,2\",f32;f32,\"2,2\",f32,24,80,"
            "0\n"
            "0,N/A,2,0,layer0/attn/MatMul,MatMul,AI_CORE,7.001,2.499,0.000,24,\"2,3;3,2\",f16;f16,\"2,2\",f32,24,40,0\n"
            "0,N/A,3,1,\"layer0/add,\"\"x\"\"\",Add,AI_VECTOR_CORE,8.000,0.800,0.000,8,4,bf16,4,bf16,4,24,1\n"
            "0,N/A,5,0,layer0/attn/MatMul,MatMul,AI_CORE,9.600,1.001,0.100,24,3,i64,,bool,48,64,0\n");
}

TEST_F(CsvExportTest, OpStatisticIsExact) {
  export_sample();
  // Per device, by total time; ratios of the device's kernel time. The golden backend's HOST_CPU
  // task is not an op of the device (Note [What op_statistic counts]).
  EXPECT_EQ(csv("op_statistic.csv"),
            "Device_id,Model Name,OP Type,Core Type,Count,Total Time(us),Avg Time(us),Min Time(us),Max Time(us),"
            "Ratio(%)\n"
            "0,N/A,MatMul,AI_CORE,2,3.500,1.750,1.001,2.499,81.40\n"
            "0,N/A,Add,AI_VECTOR_CORE,1,0.800,0.800,0.800,0.800,18.60\n");
}

TEST_F(CsvExportTest, ApiStatisticIsExact) {
  export_sample();
  EXPECT_EQ(csv("api_statistic.csv"),
            "Level,API Name,Count,Total Time(us),Avg Time(us),Min Time(us),Max Time(us),Ratio(%)\n"
            "acl,aclnnMatMul,3,2.250,0.750,0.250,1.000,34.88\n"
            "acl,aclrtMemcpy,1,2.000,2.000,2.000,2.000,31.01\n"
            "acl,aclrtSynchronizeDevice,1,1.500,1.500,1.500,1.500,23.26\n"
            "acl,aclnnAdd,1,0.700,0.700,0.700,0.700,10.85\n");
}

TEST_F(CsvExportTest, MemoryRecordIsExact) {
  export_sample();
  EXPECT_EQ(csv("memory_record.csv"),
            "Timestamp(us),Device_id,Operation,Address,Size(bytes),Allocated(bytes),Reserved(bytes)\n"
            "1.500,0,alloc,0x1000,4096,4096,2097152\n"
            "9.700,0,free,0x1000,4096,0,2097152\n");
}

TEST_F(CsvExportTest, QuotesModelAndOpNamesAndLeavesShapesEmptyWithoutTensors) {
  {
    auto w = TraceWriter::create(path("q.db"));
    w->set_meta("model_name", "my, \"model\"");
    TaskRow t = sample_task(1, 0, 2, 0, 1000, 3000, 0);
    t.name_id = w->intern("a\nb \"c\"");
    t.op_type_id = w->intern(" spaced ");
    t.task_type = 2;
    w->add(t);
    const ApiRow api{0, 500, w->intern("api,with,commas"), 0, 0};
    w->add(api);
    w->finalize();
  }
  const auto reader = TraceReader::open(path("q.db"));
  export_csv(*reader, path("csv"));
  const std::string summary = csv("op_summary.csv");
  EXPECT_EQ(summary.substr(summary.find('\n') + 1),
            "0,\"my, \"\"model\"\"\",1,2,\"a\nb \"\"c\"\"\",\" spaced \",AI_CPU,1.000,2.000,0.000,0,,,,,0,0,0\n");
  const std::string stats = csv("op_statistic.csv");
  EXPECT_EQ(stats.substr(stats.find('\n') + 1),
            "0,\"my, \"\"model\"\"\",\" spaced \",AI_CPU,1,2.000,2.000,2.000,2.000,100.00\n");
  const std::string apis = csv("api_statistic.csv");
  EXPECT_EQ(apis.substr(apis.find('\n') + 1), "unknown,\"api,with,commas\",1,0.500,0.500,0.500,0.500,100.00\n");
  EXPECT_EQ(csv("memory_record.csv"),
            "Timestamp(us),Device_id,Operation,Address,Size(bytes),Allocated(bytes),Reserved(bytes)\n");
}

TEST_F(CsvExportTest, DirectoryErrorsAreExportErrors) {
  write_sample_trace(path("t.db"));
  const auto reader = TraceReader::open(path("t.db"));
  std::ofstream(path("file")) << "x";
  try {
    export_csv(*reader, path("file"));
    ADD_FAILURE() << "no ExportError";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("not a directory"), std::string::npos) << e.what();
  }
  // Nested directories are created.
  EXPECT_EQ(export_csv(*reader, path("a/b/c")).files.size(), 5u);
  EXPECT_TRUE(std::filesystem::exists(path("a/b/c/op_summary.csv")));
}
