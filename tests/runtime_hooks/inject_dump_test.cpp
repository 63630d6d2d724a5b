// Tensor dumps through the injection library: statistics of known tensors (f32, f16, bf16, i32, and
// a large random f16 one against host-computed values), raw data round trips, and the filters
// (ops globs, steps, the byte cap with its counter, overflow_only).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "inject_test_util.h"
#include "npuscope/emulator/dispatch.h"
#include "npuscope/emulator/markers.h"
#include "npuscope/emulator/ops.h"
#include "npuscope/emulator/runtime.h"

using namespace npuscope;
using namespace npuscope::emulator;
using inject_test::open_trace;
using inject_test::Profiled;
using inject_test::stats_of;
using inject_test::TempDir;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Tensor npu(std::vector<float> v, DType dtype) {
  const std::int64_t n = static_cast<std::int64_t>(v.size());
  return Tensor::from_floats(v, {n}, dtype, DeviceRef::npu());
}

class InjectDump : public ::testing::Test {
 protected:
  // Rows by (task name, role, index).
  using Key = std::tuple<std::string, int, int>;
  std::map<Key, collector::TensorRow> tensors(bool with_data = false) {
    auto trace = open_trace(db_);
    EXPECT_TRUE(trace->complete());
    std::map<std::int64_t, std::string> names;
    for (const auto& t : trace->rows<collector::TaskRow>()) names[t.task_id] = trace->string(t.name_id);
    std::map<Key, collector::TensorRow> out;
    for (auto& row : trace->rows<collector::TensorRow>({.with_data = with_data}))
      out[{names.at(row.task_id), row.role, row.idx}] = row;
    return out;
  }
  TempDir dir_;
  std::string db_ = dir_.file("dump.db");
};

void expect_stats(const collector::TensorRow& r, std::int64_t numel, double min, double max, double mean, double l2,
                  std::int64_t nans, std::int64_t infs) {
  EXPECT_EQ(r.numel, numel);
  EXPECT_DOUBLE_EQ(r.min, min);
  EXPECT_DOUBLE_EQ(r.max, max);
  EXPECT_NEAR(r.mean, mean, 1e-12 * std::abs(mean) + 1e-15);
  EXPECT_NEAR(r.l2norm, l2, 1e-12 * l2);
  EXPECT_EQ(r.nan_count, nans);
  EXPECT_EQ(r.inf_count, infs);
}

}  // namespace

TEST_F(InjectDump, StatisticsOfKnownTensors) {
  const std::vector<float> special = {1, -2, 3, kInf, kNaN, 0.5f};
  {
    Profiled p(db_, R"({"dump": "stats"})");
    ASSERT_EQ(p.rc(), 0);
    ASSERT_TRUE(p.table().wants_tensors);
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
      ops::add(npu(special, t), npu(std::vector<float>(6, 0.0f), t), {.name = std::string(dtype_name(t))});
    }
    const std::vector<std::int64_t> ints = {3, -7, 10, 0};
    Tensor i = Tensor::from_ints(ints, {2, 2}, DType::kI32, DeviceRef::npu());
    ops::add(i, i, {.name = "i32"});
  }
  auto rows = tensors();
  for (const char* t : {"f32", "f16", "bf16"}) {
    SCOPED_TRACE(t);
    // Finite elements 1, -2, 3, 0.5; one Inf and one NaN counted apart (Note [Tensor statistics]).
    expect_stats(rows.at({t, 0, 0}), 6, -2, 3, 0.625, std::sqrt(14.25), 1, 1);
    expect_stats(rows.at({t, 0, 1}), 6, 0, 0, 0, 0, 0, 0);
    expect_stats(rows.at({t, 1, 0}), 6, -2, 3, 0.625, std::sqrt(14.25), 1, 1);
    EXPECT_EQ(rows.at({t, 0, 0}).shape, "6");
    EXPECT_TRUE(rows.at({t, 0, 0}).data.empty()) << "stats mode dumps no data";
  }
  EXPECT_EQ(rows.at({"f16", 0, 0}).dtype, static_cast<int>(DType::kF16));
  expect_stats(rows.at({"i32", 0, 0}), 4, -7, 10, 1.5, std::sqrt(158.0), 0, 0);
  expect_stats(rows.at({"i32", 1, 0}), 4, -14, 20, 3, std::sqrt(632.0), 0, 0);
  EXPECT_EQ(rows.at({"i32", 1, 0}).shape, "2,2");
}

// 37 elements: the vector loops' body (16 at a time) meets the Inf/NaN, and a tail remains.
TEST_F(InjectDump, NonFiniteValuesInsideTheVectorLoopsAreCounted) {
  std::vector<float> v(37);
  for (int i = 0; i < 37; ++i) v[i] = 0.5f * static_cast<float>(i) - 4.0f;
  v[3] = kInf;
  v[20] = -kInf;
  v[21] = kNaN;
  v[36] = kNaN;
  double sum = 0, sq = 0;
  for (float f : v) {
    if (std::isfinite(f)) {
      sum += f;
      sq += static_cast<double>(f) * f;
    }
  }
  {
    Profiled p(db_, R"({"dump": "stats"})");
    ASSERT_EQ(p.rc(), 0);
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) ops::neg(npu(v, t), {.name = std::string(dtype_name(t))});
  }
  auto rows = tensors();
  for (const char* t : {"f32", "f16", "bf16"}) {
    SCOPED_TRACE(t);
    expect_stats(rows.at({t, 0, 0}), 37, -4, 13.5, sum / 33, std::sqrt(sq), 2, 2);
    expect_stats(rows.at({t, 1, 0}), 37, -13.5, 4, -sum / 33, std::sqrt(sq), 2, 2);
  }
}

TEST_F(InjectDump, StatisticsOfALargeHalfTensorMatchTheHost) {
  Tensor x;
  {
    Profiled p(db_, R"({"dump": "stats"})");
    ASSERT_EQ(p.rc(), 0);
    x = Tensor::randn({3001}, DType::kF16, DeviceRef::npu(), 7, 3.0f);  // crosses the block size
    ops::relu(x, {.name = "relu"});
  }
  const std::vector<float> v = x.to_floats();
  double sum = 0, sq = 0, lo = v[0], hi = v[0];
  for (float f : v) {
    sum += f;
    sq += static_cast<double>(f) * f;
    lo = std::min<double>(lo, f);
    hi = std::max<double>(hi, f);
  }
  const auto rows = tensors();  // a copy: .at() on the temporary would dangle
  const auto& in = rows.at({"relu", 0, 0});
  expect_stats(in, 3001, lo, hi, sum / 3001, std::sqrt(sq), 0, 0);
}

TEST_F(InjectDump, DumpedDataRoundTrips) {
  Tensor a, h, y, g;
  {
    Profiled p(db_, R"({"dump": "tensor"})");
    ASSERT_EQ(p.rc(), 0);
    a = Tensor::randn({40, 25}, DType::kF32, DeviceRef::npu(), 1);
    h = Tensor::randn({999}, DType::kF16, DeviceRef::npu(), 2);
    y = ops::relu(a, {.name = "relu32"});
    g = ops::neg(h, {.name = "neg16"});
  }
  auto rows = tensors(true);
  const std::vector<std::pair<Key, Tensor>> expected = {
      {{"relu32", 0, 0}, a}, {{"relu32", 1, 0}, y}, {{"neg16", 0, 0}, h}, {{"neg16", 1, 0}, g}};
  for (const auto& [key, tensor] : expected) {
    SCOPED_TRACE(std::get<0>(key));
    const auto& row = rows.at(key);
    const Tensor host = tensor.cpu();
    ASSERT_EQ(row.data_bytes, static_cast<std::int64_t>(host.nbytes()));
    ASSERT_EQ(row.data.size(), host.nbytes());
    EXPECT_EQ(std::memcmp(row.data.data(), host.raw_data(), host.nbytes()), 0) << "bytes differ";
  }
  auto trace = open_trace(db_);
  EXPECT_EQ(stats_of(*trace).at("tensor_dumps"), 4);
  EXPECT_EQ(stats_of(*trace).at("tensor_bytes_dumped"), 2 * 4000 + 2 * 1998);
}

TEST_F(InjectDump, OpsGlobsSelectTasks) {
  {
    Profiled p(db_, R"({"dump": "stats", "ops": ["keep/*", "*Solo"]})");
    ASSERT_EQ(p.rc(), 0);
    Tensor a = npu({1, 2, 3}, DType::kF32);
    {
      NameScope keep("keep");
      ops::add(a, a);
    }
    {
      NameScope skip("skip");
      ops::add(a, a);
      ops::relu(a, {.name = "Solo"});
    }
  }
  std::set<std::string> names;
  for (const auto& [key, row] : tensors()) names.insert(std::get<0>(key));
  EXPECT_EQ(names, (std::set<std::string>{"keep/Add", "skip/Solo"}));
  EXPECT_EQ(open_trace(db_)->count("TASK"), 3) << "the filter selects tensors, not tasks";
}

TEST_F(InjectDump, StepsSelectTasksLaunchedInThem) {
  {
    Profiled p(db_, R"({"dump": "stats", "steps": "1-2"})");
    ASSERT_EQ(p.rc(), 0);
    Tensor a = npu({1, 2, 3}, DType::kF32);
    ops::add(a, a, {.name = "before"});
    for (int s = 0; s < 4; ++s) {
      ScopedStep step(s);
      ops::add(a, a, {.name = "s" + std::to_string(s)});
    }
    ops::add(a, a, {.name = "after"});
  }
  std::map<std::string, int> per_task;
  for (const auto& [key, row] : tensors()) per_task[std::get<0>(key)]++;
  EXPECT_EQ(per_task, (std::map<std::string, int>{{"s1", 3}, {"s2", 3}}));
}

TEST_F(InjectDump, TheByteCapStopsDumpingAndCountsTheSkips) {
  constexpr int kBytes = 1024 * 4;  // each tensor: 1024 f32
  {
    Profiled p(db_, R"({"dump": "tensor", "max_dump_bytes": )" + std::to_string(5 * kBytes) + "}");
    ASSERT_EQ(p.rc(), 0);
    Tensor a = Tensor::randn({1024}, DType::kF32, DeviceRef::npu(), 3);
    for (int i = 0; i < 4; ++i) ops::add(a, a, {.name = "add" + std::to_string(i)});  // 12 tensors
  }
  auto rows = tensors(true);
  EXPECT_EQ(rows.size(), 12u) << "statistics for every tensor";
  int with_data = 0;
  for (const auto& [key, row] : rows) with_data += row.data.empty() ? 0 : 1;
  EXPECT_EQ(with_data, 5);
  const auto stats = stats_of(*open_trace(db_));
  EXPECT_EQ(stats.at("tensor_dumps_skipped"), 7);
  EXPECT_EQ(stats.at("tensor_bytes_dumped"), 5 * kBytes);
}

TEST_F(InjectDump, OverflowOnlyKeepsDataOfOverflowingTasks) {
  {
    Profiled p(db_, R"({"dump": "tensor", "overflow_only": true})");
    ASSERT_EQ(p.rc(), 0);
    ops::exp(npu({12, 1}, DType::kF16), {.name = "big"});  // e^12 > 65504: overflows f16
    ops::exp(npu({1, 2}, DType::kF16), {.name = "small"});
  }
  auto trace = open_trace(db_);
  std::map<std::string, int> overflow;
  for (const auto& t : trace->rows<collector::TaskRow>()) overflow[trace->string(t.name_id)] = t.overflow;
  ASSERT_EQ(overflow, (std::map<std::string, int>{{"big", 1}, {"small", 0}}));
  auto rows = tensors(true);
  ASSERT_EQ(rows.size(), 4u) << "statistics for both tasks";
  EXPECT_EQ(rows.at({"big", 0, 0}).data.size(), 4u);
  EXPECT_EQ(rows.at({"big", 1, 0}).data.size(), 4u);
  EXPECT_TRUE(rows.at({"small", 0, 0}).data.empty());
  EXPECT_TRUE(rows.at({"small", 1, 0}).data.empty());
}

TEST_F(InjectDump, DumpNoneAsksForNoTensors) {
  {
    Profiled p(db_, R"({"dump": "none"})");
    ASSERT_EQ(p.rc(), 0);
    EXPECT_FALSE(p.table().wants_tensors);
    Tensor a = npu({1, 2, 3}, DType::kF32);
    ops::add(a, a);
  }
  auto trace = open_trace(db_);
  EXPECT_EQ(trace->count("TENSOR"), 0);
  EXPECT_EQ(trace->count("TASK"), 1);
}
