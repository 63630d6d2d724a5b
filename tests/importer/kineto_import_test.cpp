// The Kineto importer on every real trace of shared/realdata/kineto (Note [Kineto import]): what it
// wrote against a direct count of the file's events, the golden kernel totals, nesting, joins,
// steps, ranks and communication.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "../../importer/src/chrome_events.h"
#include "../realdata_util.h"
#include "npuscope/collector/trace_reader.h"
#include "npuscope/importer/import.h"

namespace npuscope::importer {
namespace {

namespace fs = std::filesystem;
using collector::TraceReader;

// What the file says, counted here without the importer's vocabulary.
struct DirectCounts {
  std::int64_t kernels = 0, copies = 0, memsets = 0, device_events = 0;
  std::int64_t kernel_ns = 0, device_ns = 0;  // sums of dur
  std::int64_t host_ops = 0, runtime = 0, memory = 0;
  std::int64_t python_functions = 0, python_modules = 0;  // python_function events (with_stack)
  std::set<std::int64_t> steps;
  std::int64_t joined = 0;  // device events whose correlation a runtime event has
};

bool in(std::string_view s, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

DirectCounts count_directly(const std::string& path) {
  DirectCounts c;
  std::unordered_set<std::int64_t> runtime_correlations;
  std::vector<std::int64_t> device_correlations;
  ChromeHandlers h;
  h.event = [&](const ChromeEvent& e) {
    if (e.ph == "i" && e.name == "[memory]") ++c.memory;
    if (e.ph != "X") return;
    const auto correlation = [&] {
      const ChromeArg* a = e.arg("correlation");
      return a != nullptr ? parse_int(a->value).value_or(0) : 0;
    };
    const std::int64_t dur = e.dur_ns.value_or(0);
    if (in(e.cat, {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "mtia_ccp_events"})) {
      ++c.device_events;
      c.device_ns += dur;
      if (in(e.cat, {"kernel", "Kernel"})) ++c.kernels, c.kernel_ns += dur;
      if (in(e.cat, {"gpu_memcpy", "Memcpy"}) || (e.cat == "mtia_ccp_events" && e.name.starts_with("dma_"))) ++c.copies;
      if (in(e.cat, {"gpu_memset", "Memset"})) ++c.memsets;
      if (const auto k = correlation(); k != 0) device_correlations.push_back(k);
    } else if (in(e.cat, {"cpu_op", "Operator"})) {
      ++c.host_ops;
    } else if (e.cat == "python_function") {
      ++c.host_ops;
      ++(e.name.starts_with("nn.Module:") || e.arg("Python module id") ? c.python_modules : c.python_functions);
    } else if (e.cat == "user_annotation") {
      if (e.name.starts_with("ProfilerStep#")) {
        c.steps.insert(*parse_int(e.name.substr(13)));
      } else {
        ++c.host_ops;
      }
    } else if (e.cat.ends_with("_runtime") || e.cat.ends_with("_driver") || e.cat == "Runtime") {
      ++c.runtime;
      if (const auto k = correlation(); k != 0) runtime_correlations.insert(k);
    }
  };
  stream_chrome_events(path, h);
  for (const std::int64_t k : device_correlations) c.joined += runtime_correlations.count(k);
  return c;
}

class KinetoRealTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    src_ = (testing::realdata_dir() / "kineto" / GetParam()).string();
    if (!fs::exists(src_)) GTEST_SKIP() << "shared/realdata is absent (" << src_ << ")";
    dir_ = fs::temp_directory_path() / ("kineto_real_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    trace_ = (dir_ / "t.db").string();
    const auto source = detect(src_);
    ASSERT_TRUE(source.has_value()) << src_;
    ASSERT_EQ(source->format, Format::kKineto);
    report_ = import_to_file(*source, trace_, true);
    reader_ = TraceReader::open(trace_);
  }
  void TearDown() override {
    reader_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string src_, trace_;
  fs::path dir_;
  ImportReport report_;
  std::unique_ptr<TraceReader> reader_;
};

TEST_P(KinetoRealTest, CountsMatchTheFile) {
  const DirectCounts c = count_directly(src_);
  const auto tasks = reader_->rows<collector::TaskRow>();
  EXPECT_EQ(static_cast<std::int64_t>(tasks.size()), c.device_events);
  EXPECT_EQ(reader_->count("PYTORCH_API"), c.host_ops);
  std::int64_t python_functions = 0, python_modules = 0, python_nested = 0;
  for (const auto& op : reader_->rows<collector::PytorchApiRow>()) {
    if (is(op.kind, HostOpKind::kPythonFunction)) ++python_functions;
    // An nn.Module call is a python_function event: the only module rows of a Kineto import.
    if (is(op.kind, HostOpKind::kModule)) ++python_modules;
    if ((is(op.kind, HostOpKind::kPythonFunction) || is(op.kind, HostOpKind::kModule)) && op.parent_id != 0)
      ++python_nested;
  }
  EXPECT_EQ(python_functions, c.python_functions);
  EXPECT_EQ(python_modules, c.python_modules);
  if (c.python_functions > 100) {
    EXPECT_GT(python_nested, (c.python_functions + c.python_modules) / 2);
  }
  EXPECT_EQ(reader_->count("API"), c.runtime);
  EXPECT_EQ(reader_->count("MEMORY_RECORD"), c.memory);
  EXPECT_EQ(reader_->count("MEMCPY"), c.copies);
  std::set<std::int64_t> steps;
  for (const auto& m : reader_->rows<collector::MarkerRow>()) {
    if (is(m.kind, MarkerKind::kStep)) steps.insert(m.step);
  }
  EXPECT_EQ(steps, c.steps);
  EXPECT_TRUE(reader_->complete());
  EXPECT_EQ(reader_->meta(std::string(collector::kMetaSource)), "kineto");
  EXPECT_EQ(reader_->meta(std::string(collector::kMetaSourceVersion)), "1");
  EXPECT_FALSE(report_.unmapped.empty());  // Ev Idx, ac2g flows, metadata events ... are counted
}

// The golden check: the imported kernels' time is the file's own sum of kernel durations.
TEST_P(KinetoRealTest, KernelTotalsEqualTheFilesSum) {
  const DirectCounts c = count_directly(src_);
  std::int64_t kernel_ns = 0, device_ns = 0, kernels = 0;
  reader_->for_each([&](const collector::TaskRow& t) {
    device_ns += t.end_ns - t.start_ns;
    if (is(t.task_type, TaskType::kKernel) || is(t.task_type, TaskType::kCommunication)) {
      kernel_ns += t.end_ns - t.start_ns;
      ++kernels;
    }
  });
  EXPECT_EQ(device_ns, c.device_ns);
  if (c.kernels > 0) {
    EXPECT_EQ(kernels, c.kernels);
    EXPECT_EQ(kernel_ns, c.kernel_ns);
  }
}

TEST_P(KinetoRealTest, HostOpsNestInsideTheirParentOnTheirThread) {
  const auto ops = reader_->rows<collector::PytorchApiRow>();
  std::unordered_map<std::int64_t, const collector::PytorchApiRow*> by_id;
  for (const auto& op : ops) by_id[op.id] = &op;
  std::int64_t nested = 0;
  for (const auto& op : ops) {
    if (op.parent_id == 0) continue;
    ++nested;
    const auto p = by_id.find(op.parent_id);
    ASSERT_NE(p, by_id.end()) << op.id;
    EXPECT_EQ(p->second->thread_id, op.thread_id);
    EXPECT_LE(p->second->start_ns, op.start_ns);
    EXPECT_GT(p->second->end_ns, op.start_ns);
  }
  if (ops.size() > 100) {
    EXPECT_GT(nested, static_cast<std::int64_t>(ops.size()) / 2);
  }
}

TEST_P(KinetoRealTest, TasksJoinTheirLaunchAndTheirHostOp) {
  const DirectCounts c = count_directly(src_);
  std::unordered_map<std::int64_t, collector::ApiRow> api;
  for (const auto& a : reader_->rows<collector::ApiRow>()) {
    if (a.connection_id != 0) api[a.connection_id] = a;
  }
  std::unordered_set<std::int64_t> host_ids;
  for (const auto& op : reader_->rows<collector::PytorchApiRow>()) host_ids.insert(op.id);
  std::int64_t joined = 0;
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int32_t>>> calls;  // name -> (start, call)
  reader_->for_each([&](const collector::TaskRow& t) {
    if (t.pytorch_api_id != 0) {
      EXPECT_TRUE(host_ids.count(t.pytorch_api_id)) << t.task_id;
    }
    calls[t.name_id].emplace_back(t.start_ns, t.call_index);
    const auto a = api.find(t.connection_id);
    if (a == api.end()) return;
    ++joined;
    EXPECT_EQ(t.queued_ns, a->second.start_ns) << t.task_id;
    EXPECT_EQ(t.thread_id, a->second.thread_id) << t.task_id;
  });
  EXPECT_EQ(joined, c.joined);
  for (auto& [name, list] : calls) {  // the n-th task of a name in start order has call index n
    std::stable_sort(list.begin(), list.end(), [](auto& x, auto& y) { return x.first < y.first; });
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (i > 0 && list[i].first == list[i - 1].first) continue;  // ties: either order
      EXPECT_EQ(list[i].second, static_cast<std::int32_t>(i)) << reader_->string(name);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllFiles, KinetoRealTest,
                         ::testing::Values("v100_resnet_rank0.pt.trace.json.gz", "a100_sampled_128ranks/rank-0.json.gz",
                                           "a100_sampled_128ranks/rank-1.json.gz", "a100_nccl_world2.json.gz",
                                           "mtia_inference_rank0.json.gz", "mi250_minitoy_train.json.gz",
                                           "cpu_only_rank34.json.gz",
                                           "cross_hw/h100/gaunernst_bert-small-uncased__1016001.json.gz",
                                           "cross_hw/h100/Falconsai_nsfw_image_detection__1016002.json.gz",
                                           "cross_hw/mi300/gaunernst_bert-small-uncased__1016001.json.gz",
                                           "cross_hw/mi300/Falconsai_nsfw_image_detection__1016002.json.gz"));

// ---- what single files hold ----

std::unique_ptr<TraceReader> import_real(const std::string& src, const fs::path& out) {
  import_to_file(*detect(src), out.string(), true);
  return TraceReader::open(out.string());
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("kineto_one_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

TEST(KinetoRealFiles, TwoRanksOfA128RankJobSayTheirRank) {
  NPUSCOPE_REALDATA_OR_SKIP(rank0, "kineto/a100_sampled_128ranks/rank-0.json.gz");
  NPUSCOPE_REALDATA_OR_SKIP(rank1, "kineto/a100_sampled_128ranks/rank-1.json.gz");
  TempDir dir;
  const auto r0 = import_real(rank0, dir.path / "r0.db");
  const auto r1 = import_real(rank1, dir.path / "r1.db");
  EXPECT_EQ(r0->meta(std::string(collector::kMetaRank)), "0");
  EXPECT_EQ(r1->meta(std::string(collector::kMetaRank)), "1");
  EXPECT_EQ(r0->meta(std::string(collector::kMetaWorldSize)), "128");
  EXPECT_EQ(r1->meta(std::string(collector::kMetaWorldSize)), "128");
  // Their NCCL kernels are collectives, numbered alike on both ranks.
  const auto c0 = r0->rows<collector::CommunicationRow>();
  const auto c1 = r1->rows<collector::CommunicationRow>();
  ASSERT_FALSE(c0.empty());
  EXPECT_EQ(c0.size(), c1.size());
  EXPECT_EQ(c0.back().sequence, static_cast<std::int32_t>(c0.size()) - 1);
}

TEST(KinetoRealFiles, NcclCollectivesCarryTheirProcessGroup) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "kineto/a100_nccl_world2.json.gz");
  TempDir dir;
  const auto t = import_real(src, dir.path / "t.db");
  const auto comms = t->rows<collector::CommunicationRow>();
  ASSERT_EQ(comms.size(), 21u);  // the file's 21 NCCL kernels
  std::int64_t allreduce = 0;
  for (const auto& c : comms) {
    EXPECT_GT(c.bytes, 0);
    allreduce += is(c.kind, CollectiveKind::kAllReduce);
  }
  EXPECT_EQ(allreduce, 15);  // nccl:all_reduce 15 times, nccl:broadcast 6
  std::int64_t hccl = 0;
  t->for_each([&](const collector::TaskRow& task) { hccl += is(task.task_type, TaskType::kCommunication); });
  EXPECT_EQ(hccl, 21);
  const auto groups = t->rows<collector::CommunicatorRow>();
  const auto world =
      std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return t->string(g.members_id) == "0,1"; });
  ASSERT_NE(world, groups.end());
  EXPECT_EQ(world->size, 2);
  EXPECT_EQ(world->rank, 0);
  EXPECT_EQ(t->string(world->name_id), "0 (default_pg)");
  EXPECT_EQ(t->meta(std::string(collector::kMetaWorldSize)), "2");
}

TEST(KinetoRealFiles, TimesAreExactOnTheTracesClock) {
  NPUSCOPE_REALDATA_OR_SKIP(v100, "kineto/v100_resnet_rank0.pt.trace.json.gz");
  NPUSCOPE_REALDATA_OR_SKIP(a100, "kineto/a100_nccl_world2.json.gz");
  TempDir dir;
  // displayTimeUnit "ns": ts is still microseconds; "ts": 1712195495519689.047, "dur": 63.813.
  const auto v = import_real(v100, dir.path / "v.db");
  const auto first = v->first<collector::PytorchApiRow>({.id = 1});
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->start_ns, 1712195495519689047);
  EXPECT_EQ(first->end_ns - first->start_ns, 63813);
  EXPECT_EQ(v->string(first->name_id), "autograd::engine::evaluate_function: DivBackward1");
  EXPECT_TRUE(is(first->pass, ModelPass::kBackward));
  // baseTimeNanoseconds 1711964646000000000 (written after the events) + ts 4458676522690.655 us.
  const auto a = import_real(a100, dir.path / "a.db");
  const auto op = a->first<collector::PytorchApiRow>({.id = 1});
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->start_ns, 1711964646000000000 + 4458676522690655);
  const auto devices = a->rows<collector::DeviceInfoRow>();
  ASSERT_FALSE(devices.empty());
  EXPECT_EQ(devices.front().name, "NVIDIA A100-PG509-200");
  EXPECT_EQ(devices.front().cube_cores, 108);
}

TEST(KinetoRealFiles, KernelsAreTypedByTheirAtenOpWithItsShapes) {
  NPUSCOPE_REALDATA_OR_SKIP(src, "kineto/cross_hw/mi300/gaunernst_bert-small-uncased__1016001.json.gz");
  TempDir dir;
  const auto t = import_real(src, dir.path / "t.db");
  std::int64_t addmm = 0, pmu = 0;
  std::set<std::string> shapes;
  t->for_each([&](const collector::TaskRow& task) {
    if (t->string(task.op_type_id) != "aten::addmm") return;
    ++addmm;
    shapes.insert(t->string(task.input_shapes_id));  // bias; input; weight; beta; alpha
    EXPECT_NE(task.pytorch_api_id, 0);
    EXPECT_GT(task.block_dim, 0);  // the grid's blocks
  });
  EXPECT_EQ(addmm, 26);
  EXPECT_EQ(shapes, (std::set<std::string>{"512;141,512;512,512;;;", "2048;141,512;512,2048;;;",
                                           "512;141,2048;2048,512;;;", "30522;141,512;512,30522;;;"}));
  t->for_each([&](const collector::TaskPmuRow& r) { pmu += t->string(r.name_id) == "grid"; });
  EXPECT_EQ(pmu, 60);  // every kernel's grid
  EXPECT_EQ(t->count("MEMORY_RECORD"), 236);
}

}  // namespace
}  // namespace npuscope::importer
