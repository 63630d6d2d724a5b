// The Kineto importer on small traces written here: the joins on a trace whose every value is
// known, detection, and bad input (a cut-short .json and .json.gz, a JSON that is no trace, an
// event whose ts is of the wrong type).
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../../importer/src/kineto_import.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/importer/import.h"
#include "test_files.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;
using collector::TraceReader;

// A CUDA-like trace: two host ops nested on thread 10, a step, a kernel written before its launch
// (as CUPTI delivers them), a copy, a memory event, a counter; the time base after the events.
constexpr const char* kTrace = R"J({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "Test GPU", "totalGlobalMem": 1000, "numSms": 7}],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 4},
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 10, "ts": 100.000, "dur": 900,
   "args": {"External id": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 10, "ts": 110.5, "dur": 50,
   "args": {"External id": 2, "Input Dims": [[4, 8], [16, 8], [16]], "Input type": ["float", "float", "float"],
            "Sequence number": 5, "Fwd thread id": 0, "Ev Idx": 0}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 10, "ts": 111.25, "dur": 40,
   "args": {"External id": 3, "Input Dims": [[16], [4, 8], [8, 16], [], []], "Input type": ["float", "float", "float", "Scalar", "Scalar"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 1, "tid": 10, "ts": 200, "dur": 10, "args": {"External id": 4}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 10, "ts": 112, "s": "t",
   "args": {"Total Reserved": 2048, "Total Allocated": 512, "Bytes": 512, "Addr": 1234, "Device Id": 0, "Device Type": 1}},
  {"ph": "X", "cat": "kernel", "name": "void gemm_kernel<float>(float*)",
                     "pid" : 0, "tid" : 7, "ts" : 130.001, "dur" : 5.5, "args" : {
  "External id" : 3, "device" : 0, "stream" : 7, "correlation" : 42,
      "grid" : [ 4, 2, 1 ], "block" : [ 128, 1, 1 ], "registers per thread" : 32, "queued" : 0
}
},
  {"ph": "f", "id": 42, "pid": 0, "tid": 7, "ts": 130.001, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 10, "ts": 120, "dur": 4,
   "args": {"External id": 3, "cbid": 211, "correlation": 42}},
  {"ph": "s", "id": 42, "pid": 1, "tid": 10, "ts": 120, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 10, "ts": 201, "dur": 3,
   "args": {"External id": 4, "correlation": 43}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 7, "ts": 205, "dur": 2,
   "args": {"External id": 4, "device": 0, "stream": 7, "correlation": 43, "bytes": 256}},
  {"ph": "X", "cat": "kernel", "name": "void gemm_kernel<float>(float*)", "pid": 0, "tid": 8, "ts": 125, "dur": 1,
   "args": {"device": 0, "stream": 8, "correlation": 99}},
  {"ph": "C", "name": "Clock", "pid": 0, "ts": 150, "args": {"MHz": 1410}},
  {"ph": "M", "name": "thread_name", "pid": 1, "tid": 10, "args": {"name": "python"}}
  ],
  "traceName": "t.json",
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1000000000000
})J";

class KinetoSmallTest : public ::testing::Test, protected test::TestFiles {
 protected:
  std::unique_ptr<TraceReader> import(const std::string& path, ImportReport* report = nullptr) {
    const auto source = detect(path);
    EXPECT_TRUE(source.has_value()) << path;
    if (!source) return nullptr;
    EXPECT_EQ(source->format, Format::kKineto);
    const std::string out = path + ".db";
    const ImportReport r = import_to_file(*source, out, true);
    if (report != nullptr) *report = r;
    return TraceReader::open(out);
  }
};

constexpr std::int64_t kBase = 1000000000000;

TEST_F(KinetoSmallTest, JoinsNestingAndTimes) {
  ImportReport report;
  const auto t = import(write("small.json", kTrace), &report);
  ASSERT_TRUE(t);
  EXPECT_EQ(kineto_base_time((dir_ / "small.json").string()), kBase);
  const auto ops = t->rows<collector::PytorchApiRow>();
  ASSERT_EQ(ops.size(), 3u);  // the step is a marker
  EXPECT_EQ(t->string(ops[0].name_id), "aten::linear");
  EXPECT_EQ(ops[0].start_ns, kBase + 110500);
  EXPECT_EQ(ops[0].sequence_number, 5);
  EXPECT_EQ(t->string(ops[0].input_shapes_id), "4,8;16,8;16;");
  EXPECT_EQ(t->string(ops[0].input_dtypes_id), "f32;f32;f32;");
  EXPECT_EQ(ops[1].parent_id, ops[0].id);  // addmm inside linear
  EXPECT_EQ(ops[2].parent_id, 0);          // copy_ after both ended
  const auto steps = t->rows<collector::MarkerRow>();
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].step, 7);

  const auto tasks = t->rows<collector::TaskRow>();
  ASSERT_EQ(tasks.size(), 3u);
  // In start order: the unlaunched kernel (125), the gemm (130.001), the copy (205).
  EXPECT_EQ(tasks[0].start_ns, kBase + 125000);
  EXPECT_EQ(tasks[0].call_index, 0);
  EXPECT_EQ(tasks[0].pytorch_api_id, 0);
  EXPECT_EQ(t->string(tasks[0].op_type_id), "gemm_kernel");  // no host op: the kernel's base name
  const collector::TaskRow& gemm = tasks[1];
  EXPECT_EQ(gemm.start_ns, kBase + 130001);
  EXPECT_EQ(gemm.end_ns, kBase + 135501);
  EXPECT_EQ(gemm.call_index, 1);
  EXPECT_EQ(gemm.queued_ns, kBase + 120000);  // its launch, written after it
  EXPECT_EQ(gemm.thread_id, 10);
  EXPECT_EQ(gemm.connection_id, 42);
  EXPECT_EQ(gemm.pytorch_api_id, ops[1].id);
  EXPECT_EQ(t->string(gemm.op_type_id), "aten::addmm");
  EXPECT_EQ(t->string(gemm.input_shapes_id), "16;4,8;8,16;;;");
  EXPECT_EQ(gemm.block_dim, 8);
  EXPECT_TRUE(is(gemm.task_type, TaskType::kKernel));
  EXPECT_TRUE(is(tasks[2].task_type, TaskType::kMemcpy));
  EXPECT_EQ(t->string(tasks[2].op_type_id), "aten::copy_");
  const auto copies = t->rows<collector::MemcpyRow>();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].bytes, 256);
  EXPECT_TRUE(is(copies[0].copy_kind, CopyKind::kDeviceToHost));

  const auto apis = t->rows<collector::ApiRow>();
  ASSERT_EQ(apis.size(), 2u);
  EXPECT_TRUE(is(apis[0].kind, ApiKind::kLaunch));
  EXPECT_TRUE(is(apis[1].kind, ApiKind::kMemcpyAsync));
  const auto pmu = t->rows<collector::TaskPmuRow>();
  EXPECT_EQ(pmu.size(), 3u);  // grid, block, registers per thread
  const auto mem = t->rows<collector::MemoryRow>();
  ASSERT_EQ(mem.size(), 1u);
  EXPECT_EQ(mem[0].allocated_bytes, 512);
  EXPECT_EQ(mem[0].reserved_bytes, 2048);
  const auto counters = t->rows<collector::CounterRow>();
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ(counters[0].value, 1410);
  EXPECT_EQ(t->meta(std::string(collector::kMetaRank)), "3");
  EXPECT_EQ(t->meta(std::string(collector::kMetaWorldSize)), "4");
  const auto devices = t->rows<collector::DeviceInfoRow>();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name, "Test GPU");
  EXPECT_EQ(devices[0].cube_cores, 7);

  std::map<std::string, std::int64_t> unmapped;
  for (const auto& u : report.unmapped) unmapped[u.what] += u.count;
  EXPECT_EQ(unmapped["event cat=ac2g"], 2);
  EXPECT_EQ(unmapped["event ph=M thread_name"], 1);
  EXPECT_EQ(unmapped["arg cpu_op.Ev Idx"], 1);
  EXPECT_EQ(unmapped["arg kernel.queued"], 1);
  EXPECT_EQ(unmapped["top-level member traceName"], 1);
}

TEST_F(KinetoSmallTest, DetectsKinetoOnlyByItsMarks) {
  EXPECT_TRUE(detect(write("a.json", kTrace)));
  EXPECT_TRUE(detect(write_gz("a.json.gz", kTrace)));
  // A JSON that is no trace, a generic Chrome trace object, a bare array: not Kineto.
  EXPECT_FALSE(detect(write("config.json", R"({"lr": 0.1, "epochs": 3})")));
  EXPECT_FALSE(detect(write("chrome.json", R"({"traceEvents": [{"ph": "X", "name": "a", "ts": 1}]})")));
  const auto bare = detect(write("events.json", R"([{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1}])"));
  EXPECT_TRUE(!bare || bare->format != Format::kKineto);
  // ... unless it is named as torch.profiler names its traces.
  const auto named = detect(write("host.pt.trace.json", R"([{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1}])"));
  ASSERT_TRUE(named);
  EXPECT_EQ(named->format, Format::kKineto);
  EXPECT_FALSE(detect(write("notes.txt", kTrace)));
}

TEST_F(KinetoSmallTest, CutShortJsonImportsWhatIsThereAndIsIncomplete) {
  const std::string text = kTrace;
  const std::string cut = text.substr(0, text.find("\"cat\": \"gpu_memcpy\""));
  for (const std::string& path : {write("cut.json", cut), write_gz("cut.json.gz", cut)}) {
    ImportReport report;
    const auto t = import(path, &report);
    ASSERT_TRUE(t);
    EXPECT_TRUE(report.incomplete) << path;
    EXPECT_FALSE(t->complete()) << path;
    EXPECT_EQ(t->count("PYTORCH_API"), 3) << path;
    EXPECT_EQ(t->count("TASK"), 1) << path;  // the gemm; the copy was cut
    EXPECT_FALSE(report.notes.empty());
  }
}

TEST_F(KinetoSmallTest, CutShortGzipStream) {
  // The gzip stream itself cut (a copy interrupted): the inflated part imports.
  const std::string full = write_gz("full.json.gz", kTrace);
  std::ifstream in(full, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  const std::string path = write("half.json.gz", bytes.substr(0, bytes.size() * 2 / 3));
  ImportReport report;
  const auto t = import(path, &report);
  ASSERT_TRUE(t);
  EXPECT_TRUE(report.incomplete);
  EXPECT_GT(t->count("PYTORCH_API"), 0);
}

TEST_F(KinetoSmallTest, WrongTypedTsIsCountedNotFatal) {
  std::string text = kTrace;
  const std::string from = R"("ts": 200, "dur": 10)";
  text.replace(text.find(from), from.size(), R"("ts": {"us": 200}, "dur": 10)");
  const std::string from2 = R"("ts": 205, "dur": 2)";
  text.replace(text.find(from2), from2.size(), R"("ts": "soon", "dur": 2)");
  ImportReport report;
  const auto t = import(write("bad_ts.json", text), &report);
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->complete());
  EXPECT_EQ(t->count("PYTORCH_API"), 2);  // aten::copy_ passed over
  EXPECT_EQ(t->count("TASK"), 2);         // the copy passed over
  std::int64_t bad = 0;
  for (const auto& u : report.unmapped) {
    if (u.what.starts_with("event without a valid ts")) bad += u.count;
  }
  EXPECT_EQ(bad, 2);
}

TEST_F(KinetoSmallTest, NotJsonAtAllIsAnImportErrorNamingTheFile) {
  const std::string path = write("broken.pt.trace.json", "{\"traceEvents\": [ nonsense ]}");
  const auto source = detect(path);
  ASSERT_TRUE(source);
  try {
    import_to_file(*source, path + ".db", true);
    FAIL() << "imported a file that is no JSON";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.pt.trace.json"), std::string::npos) << e.what();
  }
}

TEST_F(KinetoSmallTest, LegacyCategoriesOfPyTorch19) {
  const auto t = import(write("legacy.pt.trace.json", R"J({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "Operator", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"external id": 5}},
    {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 11, "dur": 1, "args": {"correlation": 9, "external id": 5}},
    {"ph": "X", "cat": "Kernel", "name": "relu_kernel", "pid": 0, "tid": 7, "ts": 13, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": 9, "external id": 5}},
    {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 16, "dur": 1, "args": {
  "device" : 0, "stream" : 7, "correlation" : 10}}
  ], "displayTimeUnit": "ms"
})J"));
  ASSERT_TRUE(t);
  const auto tasks = t->rows<collector::TaskRow>();
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_TRUE(is(tasks[0].task_type, TaskType::kKernel));
  EXPECT_EQ(t->string(tasks[0].op_type_id), "aten::relu");
  EXPECT_EQ(tasks[0].queued_ns, 11000);
  EXPECT_TRUE(is(tasks[1].task_type, TaskType::kMemset));
  EXPECT_EQ(t->count("API"), 1);
}

TEST_F(KinetoSmallTest, WrongJsonIsAnImportErrorNamingTheFile) {
  int i = 0;
  for (const char* text :
       {R"([1, 2, 3])", R"({"traceEvents": 7})", R"({"traceEvents": {"ph": "X"}})", R"({"traceEvents": [{"ph": )"}) {
    const std::string name = "wrong" + std::to_string(i++) + ".pt.trace.json";
    const std::string path = write(name, text);
    const auto source = detect(path);
    ASSERT_TRUE(source) << text;  // named as torch.profiler names its traces
    try {
      import_to_file(*source, path + ".db", true);
      ADD_FAILURE() << "imported " << text;
    } catch (const ImportError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
}

// Ids past 2^53 and times with nanosecond digits, as numbers or strings, are read exactly (a double
// would round them).
TEST_F(KinetoSmallTest, IdsPast2To53AndNanosecondDigitsAreExact) {
  const auto t = import(write("exact.pt.trace.json", R"J({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": "1736408883688177.930", "dur": 10.001,
     "args": {"External id": 9007199254740995}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 1736408883688178.001, "dur": 1,
     "args": {"External id": 9007199254740995, "correlation": 9007199254740993}},
    {"ph": "X", "cat": "kernel", "name": "mm_kernel", "pid": 0, "tid": 7, "ts": "1736408883688180.123", "dur": "2.5",
     "args": {"device": 0, "stream": 7, "correlation": 9007199254740993}}]})J"));
  ASSERT_TRUE(t);
  const auto ops = t->rows<collector::PytorchApiRow>();
  const auto tasks = t->rows<collector::TaskRow>();
  ASSERT_EQ(ops.size(), 1u);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(ops[0].start_ns, 1736408883688177930);
  EXPECT_EQ(ops[0].end_ns, 1736408883688187931);
  EXPECT_EQ(tasks[0].connection_id, 9007199254740993);
  EXPECT_EQ(tasks[0].start_ns, 1736408883688180123);
  EXPECT_EQ(tasks[0].end_ns, 1736408883688182623);
  EXPECT_EQ(tasks[0].queued_ns, 1736408883688178001);
  EXPECT_EQ(tasks[0].pytorch_api_id, ops[0].id);
}

// ts is microseconds whatever displayTimeUnit says (it only sets the viewer's display unit).
TEST_F(KinetoSmallTest, DisplayTimeUnitMsOrNsReadsTheSameTimes) {
  std::vector<std::int64_t> starts;
  for (const char* unit : {"ms", "ns", ""}) {
    std::string text = kTrace;
    const std::string from = R"("displayTimeUnit": "ms",)";
    text.replace(text.find(from), from.size(),
                 *unit != '\0' ? std::string(R"("displayTimeUnit": ")") + unit + "\"," : std::string());
    const auto t = import(write(std::string("unit_") + unit + ".json", text));
    ASSERT_TRUE(t);
    std::int64_t sum = 0;
    for (const auto& task : t->rows<collector::TaskRow>()) sum += task.start_ns - kBase;
    starts.push_back(sum);
  }
  EXPECT_EQ(starts, (std::vector<std::int64_t>(3, 125000 + 130001 + 205000)));
}

// The runtimes Kineto records: ROCm/HIP (the call written before its kernel), MTIA (one copy call
// done as several DMA requests on the device), PrivateUse1 (an out-of-tree backend's runtime).
TEST_F(KinetoSmallTest, HipMtiaAndPrivateUse1Runtimes) {
  const auto t = import(write("runtimes.pt.trace.json", R"J({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 5, "ts": 10, "dur": 20, "args": {"External id": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 5, "ts": 11, "dur": 1,
     "args": {"External id": 1, "correlation": 100}},
    {"ph": "X", "cat": "kernel", "name": "elementwise_kernel", "pid": 2, "tid": 0, "ts": 14, "dur": 2,
     "args": {"device": 2, "stream": 0, "correlation": 100}},
    {"ph": "X", "cat": "mtia_ccp_events", "name": "dma_request", "pid": 17, "tid": 3, "ts": 40, "dur": 5,
     "args": {"correlation": 200, "stream": 101, "direction": "HOST_TO_DEVICE", "size": 64}},
    {"ph": "X", "cat": "mtia_ccp_events", "name": "dma_request", "pid": 17, "tid": 3, "ts": 46, "dur": 5,
     "args": {"correlation": 200, "stream": 101, "direction": "HOST_TO_DEVICE", "size": 32}},
    {"ph": "X", "cat": "mtia_runtime", "name": "enqueueCommand memcpyHtoDAsync", "pid": 1, "tid": 6, "ts": 35, "dur": 1,
     "args": {"correlation": 200, "device": 17, "stream_id": 101}},
    {"ph": "X", "cat": "privateuse1_runtime", "name": "aclrtLaunchKernel", "pid": 1, "tid": 7, "ts": 60, "dur": 1,
     "args": {"correlation": 300}},
    {"ph": "X", "cat": "privateuse1_driver", "name": "rtKernelLaunch", "pid": 1, "tid": 7, "ts": 60.5, "dur": 0.25},
    {"ph": "X", "cat": "kernel", "name": "AddCustom", "pid": 3, "tid": 1, "ts": 62, "dur": 3,
     "args": {"device": 3, "stream": 1, "correlation": 300}}]})J"));
  ASSERT_TRUE(t);
  const auto tasks = t->rows<collector::TaskRow>();
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_EQ(tasks[0].queued_ns, 11000);  // HIP
  EXPECT_EQ(tasks[0].thread_id, 5);
  EXPECT_EQ(tasks[0].device_id, 2);
  EXPECT_EQ(t->string(tasks[0].op_type_id), "aten::add");
  for (const int i : {1, 2}) {  // both DMA requests of the one MTIA call
    EXPECT_TRUE(is(tasks[i].task_type, TaskType::kMemcpy)) << i;
    EXPECT_EQ(tasks[i].queued_ns, 35000) << i;
    EXPECT_EQ(tasks[i].thread_id, 6) << i;
  }
  const auto copies = t->rows<collector::MemcpyRow>();
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0].bytes + copies[1].bytes, 96);
  EXPECT_TRUE(is(copies[0].copy_kind, CopyKind::kHostToDevice));
  EXPECT_EQ(tasks[3].queued_ns, 60000);  // PrivateUse1
  EXPECT_EQ(tasks[3].device_id, 3);
  const auto apis = t->rows<collector::ApiRow>();
  ASSERT_EQ(apis.size(), 4u);
  EXPECT_TRUE(is(apis[0].kind, ApiKind::kLaunch));
  EXPECT_TRUE(is(apis[1].kind, ApiKind::kMemcpyAsync));
  EXPECT_TRUE(is(apis[2].kind, ApiKind::kLaunch));
  EXPECT_TRUE(is(apis[3].kind, ApiKind::kLaunch));
}

}  // namespace
}  // namespace npuscope::importer
