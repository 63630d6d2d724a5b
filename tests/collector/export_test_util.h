// A small trace with every kind of row, for the export tests (collector and CLI).
//
// Host thread 0 calls (API rows, ns):
//   aclrtMemcpy [1000,3000] conn 1   -> MEMCPY task 1, npu:0 stream 0 [2500,4000], HtoD 4096 bytes
//   aclnnMatMul [5000,6000] conn 2   -> task 2 "layer0/attn/MatMul" npu:0 stream 0 [7001,9500] AI_CORE
//   aclnnAdd    [6500,7200] conn 3   -> task 3 `layer0/add,"x"` npu:0 stream 1 [8000,8800] AI_VECTOR_CORE,
//                                       overflow
//   aclrtSynchronizeDevice [7300,8800] conn 4 (no task)
//   aclnnMatMul [8900,9150] conn 6   -> task 5 "layer0/attn/MatMul" (call 1) npu:0 stream 0 [9600,10601]
// Host thread 1:
//   aclnnMatMul [1000,2000] conn 5   -> task 4 "layer0/attn/MatMul" on the cpu golden backend [1200,1900]
// Markers on thread 0: step 0 [800,9800] (no name), range "forward" [900,9700], instant "checkpoint"
// at 9650. Memory on npu:0: alloc 4096 at 1500, free at 9700 (reserved 2 MiB).
// Tensors (data zstd-compressed as the recorder stores it, unless stats_only):
//   task 2: in0 f16 [2,3], in1 f16 [3,2], out0 f32 [2,2]
//   task 3: in0 bf16 [4], out0 bf16 [4] statistics only
//   task 4: in0 f32 [2,3] and in1 f32 [3,2] statistics only, out0 f32 [2,2]
//   task 5: in0 i64 [3], out0 bool scalar
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <zstd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "npuscope/collector/trace_writer.h"

namespace npuscope::collector::testing {

// A fixture with a private temporary directory, removed afterwards.
class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() / ("npuscope_export_" + std::string(info->name()) + "_" +
                                                     std::to_string(getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

template <class T>
std::vector<std::uint8_t> bytes_of(const std::vector<T>& values) {
  std::vector<std::uint8_t> out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

inline std::vector<std::uint8_t> compress(const std::vector<std::uint8_t>& raw) {
  std::vector<std::uint8_t> out(ZSTD_compressBound(raw.size()));
  out.resize(ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), 1));
  return out;
}

// The sample tensor data, by (task, role, index).
// f16 1, 2, 0.5, -1, 3, 0
inline const std::vector<std::uint16_t> kTask2In0F16 = {0x3C00, 0x4000, 0x3800, 0xBC00, 0x4200, 0x0000};
inline const std::vector<std::uint16_t> kTask2In1F16 = {0x3C00, 0x3C00, 0x3C00, 0x3C00, 0x3C00, 0x3C00};
inline const std::vector<float> kTask2Out0 = {3.5f, 3.5f, 2.0f, 2.0f};
inline const std::vector<std::uint16_t> kTask3In0BF16 = {0x3F80, 0xC020, 0x4049, 0x0000};  // 1 -2.5 3.140625 0
inline const std::vector<float> kTask4Out0 = {3.5f, 3.5f, 2.0f, 2.0f};
inline const std::vector<std::int64_t> kTask5In0 = {-7, 0, 1'000'000'000'000};
inline const std::vector<std::uint8_t> kTask5Out0 = {1};

inline TensorRow sample_tensor(std::int64_t task, int role, int idx, int dtype, const std::string& shape,
                               std::int64_t numel, const std::vector<std::uint8_t>& raw, bool stats_only) {
  TensorRow t;
  t.task_id = task;
  t.role = role;
  t.idx = idx;
  t.dtype = dtype;
  t.shape = shape;
  t.numel = numel;
  t.min = -1;
  t.max = 3;
  t.mean = 0.5;
  t.l2norm = 4;
  if (!stats_only && !raw.empty()) {
    t.data = compress(raw);
    t.data_bytes = static_cast<std::int64_t>(raw.size());
  }
  return t;
}

inline void add_sample_tensors(TraceWriter& w, bool stats_only) {
  constexpr int kF32 = 0, kF16 = 1, kBF16 = 2, kI64 = 6, kBool = 7;
  w.add(sample_tensor(2, 0, 0, kF16, "2,3", 6, bytes_of(kTask2In0F16), stats_only));
  w.add(sample_tensor(2, 0, 1, kF16, "3,2", 6, bytes_of(kTask2In1F16), stats_only));
  w.add(sample_tensor(2, 1, 0, kF32, "2,2", 4, bytes_of(kTask2Out0), stats_only));
  w.add(sample_tensor(3, 0, 0, kBF16, "4", 4, bytes_of(kTask3In0BF16), stats_only));
  w.add(sample_tensor(3, 1, 0, kBF16, "4", 4, {}, true));
  w.add(sample_tensor(4, 0, 0, kF32, "2,3", 6, {}, true));
  w.add(sample_tensor(4, 0, 1, kF32, "3,2", 6, {}, true));
  w.add(sample_tensor(4, 1, 0, kF32, "2,2", 4, bytes_of(kTask4Out0), stats_only));
  w.add(sample_tensor(5, 0, 0, kI64, "3", 3, bytes_of(kTask5In0), stats_only));
  w.add(sample_tensor(5, 1, 0, kBool, "", 1, bytes_of(kTask5Out0), stats_only));
}

inline TaskRow sample_task(std::int64_t id, std::int32_t device, std::int32_t stream, std::int64_t queued,
                           std::int64_t start, std::int64_t end, std::int64_t connection) {
  TaskRow t;
  t.task_id = id;
  t.device_id = device;
  t.stream_id = stream;
  t.queued_ns = queued;
  t.start_ns = start;
  t.end_ns = end;
  t.connection_id = connection;
  return t;
}

inline void add_sample_tasks(TraceWriter& w) {
  const StringId matmul = w.intern("layer0/attn/MatMul"), matmul_type = w.intern("MatMul");
  TaskRow t2 = sample_task(2, 0, 0, 5500, 7001, 9500, 2);
  t2.name_id = matmul;
  t2.op_type_id = matmul_type;
  t2.task_type = 0;
  t2.block_dim = 24;
  t2.flops = 24;
  t2.bytes = 40;
  TaskRow t3 = sample_task(3, 0, 1, 7000, 8000, 8800, 3);
  t3.name_id = w.intern("layer0/add,\"x\"");
  t3.op_type_id = w.intern("Add");
  t3.task_type = 1;
  t3.block_dim = 8;
  t3.flops = 4;
  t3.bytes = 24;
  t3.overflow = 1;
  TaskRow t4 = sample_task(4, -1, 0, 1200, 1200, 1900, 5);
  t4.name_id = matmul;
  t4.op_type_id = matmul_type;
  t4.task_type = 6;
  t4.block_dim = 1;
  t4.flops = 24;
  t4.bytes = 80;
  t4.thread_id = 1;
  TaskRow t5 = sample_task(5, 0, 0, 9000, 9600, 10601, 6);
  t5.name_id = matmul;
  t5.op_type_id = matmul_type;
  t5.task_type = 0;
  t5.block_dim = 24;
  t5.flops = 48;
  t5.bytes = 64;
  t5.call_index = 1;
  const TaskRow tasks[] = {t4, t2, t3, t5};  // start-time order, as the recorder sees them end
  w.add(tasks);
}

inline void add_sample_host_rows(TraceWriter& w) {
  constexpr auto kAcl = static_cast<std::int32_t>(ApiLevel::kAcl);  // the emulator's calls are AscendCL's
  const ApiRow apis[] = {
      {1000, 3000, w.intern("aclrtMemcpy"), 1, 0, 0, kAcl},
      {5000, 6000, w.intern("aclnnMatMul"), 2, 0, 0, kAcl},
      {6500, 7200, w.intern("aclnnAdd"), 3, 0, 0, kAcl},
      {7300, 8800, w.intern("aclrtSynchronizeDevice"), 4, 0, 0, kAcl},
      {8900, 9150, w.intern("aclnnMatMul"), 6, 0, 0, kAcl},
      {1000, 2000, w.intern("aclnnMatMul"), 5, 1, 0, kAcl},
  };
  w.add(apis);
  MarkerRow step{800, 9800, 0, 0, 1, 0};
  MarkerRow forward{900, 9700, w.intern("forward"), 0, 0, -1};
  MarkerRow checkpoint{9650, 9650, w.intern("checkpoint"), 0, 0, -1};
  const MarkerRow markers[] = {step, forward, checkpoint};
  w.add(markers);
  const MemoryRow memory[] = {{1500, 0, 0, 0x1000, 4096, 4096, 2 << 20, 0}, {9700, 0, 1, 0x1000, 4096, 0, 2 << 20, 0}};
  w.add(memory);
  const MemcpyRow copy{1, 2500, 4000, 2000, 0, 0, 4096, 1, 1};
  w.add(copy);
}

// Writes the sample trace to `path`, finalized (complete) unless `finalize` is false.
inline void write_sample_trace(const std::string& path, bool stats_only = false, bool finalize = true) {
  auto w = TraceWriter::create(path, {.overwrite = true});
  DeviceInfoRow device;
  device.device_id = 0;
  device.name = "ascend910b";
  w->add(device);
  add_sample_host_rows(*w);
  add_sample_tasks(*w);
  add_sample_tensors(*w, stats_only);
  if (finalize) w->finalize();
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A trace of `tasks` Add tasks on 4 streams of npu:0, 500 op names, each launched by an API call on
// host thread 0 (connection id = task id), one every microsecond: what the exports stream.
inline void write_launch_trace(const std::string& path, std::int64_t tasks) {
  auto w = TraceWriter::create(path);
  const StringId api = w->intern("aclnnAdd"), op = w->intern("Add");
  std::vector<TaskRow> task_rows;
  std::vector<ApiRow> apis;
  for (std::int64_t i = 0; i < tasks; ++i) {
    TaskRow t =
        sample_task(i + 1, 0, static_cast<std::int32_t>(i % 4), i * 1000 + 100, i * 1000 + 500, i * 1000 + 900, i + 1);
    t.name_id = w->intern("layer" + std::to_string(i % 500) + "/add");
    t.op_type_id = op;
    t.task_type = 1;
    t.overflow = i % 1000 == 0;
    task_rows.push_back(t);
    apis.push_back({i * 1000, i * 1000 + 200, api, i + 1, 0});
    if (task_rows.size() == 10'000) {
      w->add(task_rows);
      w->add(apis);
      task_rows.clear();
      apis.clear();
    }
  }
  w->add(task_rows);
  w->add(apis);
  w->finalize();
}

// Whether the libraries run under AddressSanitizer (the tests' own code is not instrumented: Note
// [Uninstrumented test code] in cmake/sanitizers.cmake, so the runtime's symbol is asked). Its
// quarantine keeps freed blocks, so that a process's peak RSS then grows with all it allocated, not
// with what it held: a bound on the growth of an export that streams holds only without it.
extern "C" void __asan_init() __attribute__((weak));
inline bool under_asan() { return __asan_init != nullptr; }

// A line of /proc/self/status in KiB ("VmRSS", "VmHWM"), or -1: what an export that streams must
// not grow.
inline std::int64_t proc_status_kib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  }
  return -1;
}

}  // namespace npuscope::collector::testing
