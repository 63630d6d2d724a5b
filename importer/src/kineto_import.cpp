// The Kineto importer: Note [Kineto import] in kineto_import.h; the mapping is docs/import.md "Kineto".
#include "kineto_import.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <array>
#include <memory>
#include <span>
#include <unordered_map>

#include "api_levels.h"
#include "ascend_host_ops.h"  // host_op_kind of a python_function, as torch_npu's exports have them
#include "chrome_events.h"
#include "kineto_device_tasks.h"
#include "kineto_vocabulary.h"

namespace npuscope::importer {
namespace {

using namespace kineto;
using collector::compact_string_id;

// Note [Kineto op types]
// A device task is typed by the host op that launched it (op_type: "aten::addmm", input shapes and
// dtypes its inputs'), not by its kernel's name: kernel names are the vendor's (cutlass_80_wmma...,
// Cijk_Alik_Bljk...), aten ops are the model's, so that `npuscope diff` pairs an H100 trace's
// kernels with an MI300X trace's by type and shapes (Note [Op pairing]). An aten op that is one
// vendor's implementation (aten::cudnn_convolution on CUDA, aten::miopen_convolution on ROCm) types
// its tasks by the op it implements, its parent (aten::_convolution), the same on both. A task no
// host op launched (a sampled trace, a runtime's own copy) is typed by its kernel's base name.
//
// A host op as a device task needs it, by the op's External id (Note [Kineto import]).
struct HostOpRef {
  std::uint32_t row = 0;  // PYTORCH_API.id; 0: none
  std::int32_t name = 0, shapes = 0, dtypes = 0;
  std::int32_t comm = -1;  // the collective (record_param_comms) it ran in
};

// External id -> HostOpRef, the only state that grows with the trace. Kept in 8 bytes a host op:
// its row and the index of its (name, shapes, dtypes, collective), which repeat from step to step
// and are kept once each. In pages of 4096 ids, allocated as ids are seen: dense ids (Kineto's
// count up) cost 8 bytes each, sparse ones (a sampled trace) a page per id at worst.
class HostOpIndex {
 public:
  std::optional<HostOpRef> find(std::int64_t id) const {
    if (id < 0) return std::nullopt;
    const auto p = pages_.find(id >> kBits);
    if (p == pages_.end()) return std::nullopt;
    const Entry& e = (*p->second)[static_cast<std::size_t>(id & kMask)];
    if (e.row == 0) return std::nullopt;
    const Info& i = infos_[e.info];
    return HostOpRef{e.row, i.name, i.shapes, i.dtypes, i.comm};
  }
  void insert(std::int64_t id, const HostOpRef& r) {
    if (id < 0) return;
    auto& page = pages_[id >> kBits];
    if (!page) page = std::make_unique<Page>();
    const Info info{r.name, r.shapes, r.dtypes, r.comm};
    const auto [it, added] = info_index_.try_emplace(info, static_cast<std::uint32_t>(infos_.size()));
    if (added) infos_.push_back(info);
    (*page)[static_cast<std::size_t>(id & kMask)] = {r.row, it->second};
  }

 private:
  struct Entry {
    std::uint32_t row = 0, info = 0;
  };
  static_assert(sizeof(Entry) == 8);
  struct Info {
    std::int32_t name, shapes, dtypes, comm;
    bool operator==(const Info&) const = default;
  };
  struct InfoHash {
    std::size_t operator()(const Info& i) const {
      std::uint64_t h = static_cast<std::uint32_t>(i.name);
      h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint32_t>(i.shapes);
      h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint32_t>(i.dtypes);
      h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint32_t>(i.comm);
      return static_cast<std::size_t>(h ^ (h >> 29));
    }
  };
  static constexpr int kBits = 12;
  static constexpr std::int64_t kMask = (std::int64_t{1} << kBits) - 1;
  using Page = std::array<Entry, std::size_t{1} << kBits>;
  std::unordered_map<std::int64_t, std::unique_ptr<Page>> pages_;
  std::vector<Info> infos_;
  std::unordered_map<Info, std::uint32_t, InfoHash> info_index_;
};

// Note [Kineto input lists]
// Host ops' "Input Dims" and "Input type" are written in the shared form of tensor_lists.h (what an
// Ascend profile's op gets), so that diff pairs a GPU op with an NPU op by shapes. The same few
// texts repeat on most host ops: each distinct JSON text is converted once and its string id kept
// (as many as the trace's distinct lists, which the trace's string table holds anyway).
class ListIds {
 public:
  template <class Convert>
  collector::StringId get(std::string_view json, Convert&& convert) {
    if (const auto it = ids_.find(json); it != ids_.end()) return it->second;
    if (ids_.size() >= kMax) ids_.clear();  // a trace of ever-new shapes: converting each is all it costs
    const collector::StringId id = convert(json);
    ids_.emplace(std::string(json), id);
    return id;
  }

 private:
  static constexpr std::size_t kMax = 1 << 16;
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, collector::StringId, Hash, std::equal_to<>> ids_;
};

struct CommInfo {
  std::int32_t communicator = 0;  // index into communicators_
  std::optional<CollectiveKind> kind;
  std::int32_t dtype = 0;
  std::int64_t bytes = 0;
};

struct Communicator {
  std::string key;  // Process Group Name (or the ranks when unnamed)
  std::string name, members;
  std::int32_t size = 0;
  std::int32_t sequence = 0;  // collectives so far
};

struct OpenOp {
  std::int64_t end_ns;
  std::int64_t row;
  std::int8_t pass;
  HostOpRef ref;  // what its tasks are typed by
};

std::int64_t int_or(std::string_view text, std::int64_t fallback) { return parse_int(text).value_or(fallback); }

class KinetoImporter {
 public:
  KinetoImporter(const Source& source, ImportSink& sink)
      : sink_(sink), file_(source.files.empty() ? source.path : source.files.front()) {}

  void run() {
    base_ns_ = kineto_base_time(file_).value_or(0);
    ChromeHandlers h;
    h.event = [this](const ChromeEvent& e) { event(e); };
    h.top_level = [this](std::string_view key, std::string_view json) { top_level(key, json); };
    const ChromeStreamResult r = stream_chrome_events(file_, h);
    tasks_.drain([this](PendingTask&& t) { emit(std::move(t)); });
    write_communicators();
    if (r.truncated) {
      sink_.set_incomplete();
      sink_.note(file_ + " ends inside its JSON (cut short): the " + std::to_string(r.events) +
                 " events before the cut were imported");
    }
  }

 private:
  // ---- events ------------------------------------------------------------------------------------
  void event(const ChromeEvent& e) {
    const EventKind kind = classify(e.ph, e.cat, e.name);
    if (kind == EventKind::kOther) return unmapped_event(e);
    if (!e.ts_ns) return unmapped("event without a valid ts: cat=", e.cat);
    switch (kind) {
      case EventKind::kHostOp: return host_op(e, false);
      case EventKind::kUserAnnotation: return host_op(e, true);
      case EventKind::kPythonFunction: return python_function(e);
      case EventKind::kKernel:
      case EventKind::kMemcpy:
      case EventKind::kMemset: return device_task(e, kind);
      case EventKind::kRuntime: return runtime(e);
      case EventKind::kMemory: return memory(e);
      case EventKind::kCounter: return counter(e);
      case EventKind::kOther: return;
    }
  }

  void host_op(const ChromeEvent& e, bool annotation) {
    const std::int64_t start = *e.ts_ns + base_ns_, end = start + e.dur_ns.value_or(0);
    const auto tid = static_cast<std::int32_t>(int_or(e.tid, 0));
    if (annotation) {
      if (const auto step = profiler_step(e.name)) {
        sink_.add(collector::MarkerRow{.start_ns = start,
                                       .end_ns = end,
                                       .name_id = sink_.id(e.name),
                                       .thread_id = tid,
                                       .kind = static_cast<std::int32_t>(MarkerKind::kStep),
                                       .step = *step});
        count_args(e, kStepArgs);
        return;
      }
    }
    std::vector<OpenOp>& stack = stacks_[tid];
    while (!stack.empty() && stack.back().end_ns <= start) stack.pop_back();
    const OpenOp* parent = stack.empty() ? nullptr : &stack.back();
    const std::int64_t row_id = ++host_rows_;
    const ChromeArg* dims = e.arg("Input Dims");
    if (dims == nullptr) dims = e.arg("Input dims");
    const ChromeArg* types = e.arg("Input type");
    const collector::StringId shapes =
        dims != nullptr ? shape_ids_.get(dims->value, [this](auto json) { return sink_.id(input_shapes(json)); }) : 0;
    const collector::StringId dtypes =
        types != nullptr ? dtype_ids_.get(types->value, [this](auto json) { return sink_.id(input_dtypes(json)); }) : 0;
    collector::StringId stack_id = 0;
    if (const ChromeArg* s = e.arg("Call stack")) {
      text_.clear();
      append_stack(text_, s->value);
      stack_id = sink_.id(text_);
    }
    const ChromeArg* module = e.arg("Module Hierarchy");
    std::int8_t pass = parent != nullptr ? parent->pass : static_cast<std::int8_t>(ModelPass::kForward);
    if (const auto p = pass_started_by(e.name)) pass = static_cast<std::int8_t>(*p);
    const collector::StringId name_id = sink_.id(e.name);
    sink_.add(
        collector::PytorchApiRow{.id = row_id,
                                 .start_ns = start,
                                 .end_ns = end,
                                 .thread_id = tid,
                                 .name_id = name_id,
                                 .kind = static_cast<std::int32_t>(host_op_kind(e.name, annotation)),
                                 .pass = pass,
                                 .module_id = module != nullptr ? sink_.id(module->value) : 0,
                                 .sequence_number = int_or(arg_value(e, "Sequence number"), -1),
                                 .fwd_thread_id = static_cast<std::int32_t>(int_or(arg_value(e, "Fwd thread id"), 0)),
                                 .input_shapes_id = shapes,
                                 .input_dtypes_id = dtypes,
                                 .parent_id = parent != nullptr ? parent->row : 0,
                                 .stack_id = stack_id});
    HostOpRef ref{static_cast<std::uint32_t>(row_id), compact_string_id(name_id), compact_string_id(shapes),
                  compact_string_id(dtypes), parent != nullptr ? parent->ref.comm : -1};
    if (e.name == "record_param_comms") ref.comm = collective_of(e);
    if (parent != nullptr && is_vendor_op(e.name)) {  // Note [Kineto op types]
      ref.name = parent->ref.name;
      ref.shapes = parent->ref.shapes;
      ref.dtypes = parent->ref.dtypes;
    }
    host_ops_.insert(int_or(external_id(e), -1), ref);
    stack.push_back({end, row_id, pass, ref});
    count_args(e, e.name == "record_param_comms" ? std::span<const std::string_view>(kCommArgs) : kHostArgs);
  }

  // A Python function (the stack tracer's, with_stack) or an nn.Module call: a host op nested by its
  // "Python parent id". Kineto writes them after every cpu_op, so they nest among themselves only
  // (a cpu_op's parent stays the op around it).
  void python_function(const ChromeEvent& e) {
    const std::int64_t start = *e.ts_ns + base_ns_, end = start + e.dur_ns.value_or(0);
    const std::int64_t row_id = ++host_rows_;
    const std::int64_t python_id = int_or(arg_value(e, "Python id"), -1);
    const std::int64_t parent_id = int_or(arg_value(e, "Python parent id"), -1);
    const bool parent_known = parent_id >= 0 && parent_id < static_cast<std::int64_t>(python_rows_.size()) &&
                              python_rows_[static_cast<std::size_t>(parent_id)] != 0;
    const std::int64_t parent_row = parent_known ? python_rows_[static_cast<std::size_t>(parent_id)] : 0;
    sink_.add(collector::PytorchApiRow{.id = row_id,
                                       .start_ns = start,
                                       .end_ns = end,
                                       .thread_id = static_cast<std::int32_t>(int_or(e.tid, 0)),
                                       .name_id = sink_.id(e.name),
                                       .kind = static_cast<std::int32_t>(host_op_kind(
                                           "python_function", e.name, e.arg("Python module id") != nullptr)),
                                       .pass = static_cast<std::int8_t>(ModelPass::kForward),
                                       .sequence_number = -1,
                                       .parent_id = parent_row});
    // Python ids count from 0 in the tracer's order: a vector (8 bytes a function), bounded against a
    // damaged id.
    if (python_id >= 0 && python_id < static_cast<std::int64_t>(host_rows_) + (1 << 20)) {
      if (python_rows_.size() <= static_cast<std::size_t>(python_id))
        python_rows_.resize(static_cast<std::size_t>(python_id) + 1, 0);
      python_rows_[static_cast<std::size_t>(python_id)] = row_id;
    }
    count_args(e, kPythonArgs);
  }

  void runtime(const ChromeEvent& e) {
    const std::int64_t start = *e.ts_ns + base_ns_;
    const auto tid = static_cast<std::int32_t>(int_or(e.tid, 0));
    const std::int64_t correlation = int_or(arg_value(e, "correlation"), 0);
    sink_.add(collector::ApiRow{.start_ns = start,
                                .end_ns = start + e.dur_ns.value_or(0),
                                .name_id = sink_.id(e.name),
                                .connection_id = correlation,
                                .thread_id = tid,
                                .kind = static_cast<std::int32_t>(api_kind(e.name)),
                                .level = static_cast<std::int32_t>(kineto_api_level(e.cat))});
    if (correlation != 0) tasks_.launch(correlation, {start, tid, int_or(external_id(e), -1)});
    count_args(e, kRuntimeArgs);
  }

  void device_task(const ChromeEvent& e, EventKind kind) {
    PendingTask t;
    collector::TaskRow& r = t.row;
    r.task_id = sink_.next_task_id();
    r.start_ns = *e.ts_ns + base_ns_;
    r.end_ns = r.start_ns + e.dur_ns.value_or(0);
    r.queued_ns = r.start_ns;
    r.device_id = static_cast<std::int32_t>(int_or(arg_value(e, "device"), int_or(e.pid, 0)));
    std::string_view stream = arg_value(e, "stream");
    if (stream.empty()) stream = arg_value(e, "stream_id");
    r.stream_id = static_cast<std::int32_t>(int_or(stream, int_or(e.tid, 0)));
    r.name_id = sink_.id(e.name);
    const TaskType type = task_type(kind, e.name);
    r.task_type = static_cast<std::int32_t>(type);
    r.connection_id = int_or(arg_value(e, "correlation"), 0);
    t.external_id = int_or(external_id(e), -1);
    if (kind == EventKind::kKernel) kernel_metrics(e, r);
    if (type == TaskType::kMemcpy || type == TaskType::kMemset) {
      std::string_view bytes = arg_value(e, "bytes");
      if (bytes.empty()) bytes = arg_value(e, "size");
      t.bytes = int_or(bytes, 0);
      std::string_view direction = arg_value(e, "kind");
      if (direction.empty()) direction = arg_value(e, "direction");
      t.copy_kind = copy_kind(e.name, direction);
    }
    if (type == TaskType::kCommunication) {
      if (e.arg("Collective name") != nullptr) t.comm = collective_of(e);
      t.kernel_collective = kernel_collective(e.name);
      t.reduce = reduce_op(e.name, CollectiveKind::kAllReduce);
    }
    if (kind == EventKind::kKernel) {
      t.own_type = sink_.id(kernel_type(e.name));
    } else {
      t.own_type = sink_.id(e.name.substr(0, e.name.find(" (")));
    }
    count_args(e, kind == EventKind::kKernel ? std::span<const std::string_view>(kKernelArgs) : kCopyArgs);
    tasks_.push(std::move(t), [this](PendingTask&& p) { emit(std::move(p)); });
  }

  // The kernel's launch configuration and occupancy: TASK_PMU rows; the grid's blocks as block_dim.
  void kernel_metrics(const ChromeEvent& e, collector::TaskRow& r) {
    for (const ChromeArg& a : e.args) {
      if (std::find(std::begin(kPmuArgs), std::end(kPmuArgs), a.key) == std::end(kPmuArgs)) continue;
      double value = 0;
      if (a.kind == ChromeArg::Kind::kJson) {
        std::int64_t product = 1;
        if (!for_each_int(a.value, [&](std::int64_t v) { product *= v; })) continue;
        value = static_cast<double>(product);
        if (a.key == "grid") r.block_dim = static_cast<std::int32_t>(std::clamp<std::int64_t>(product, 0, INT32_MAX));
      } else if (const auto d = parse_double(a.value)) {
        value = *d;
      } else {
        continue;
      }
      sink_.add(collector::TaskPmuRow{.task_id = r.task_id, .name_id = pmu_name(a.key), .value = value});
    }
  }

  // A task leaves the window, in start order: its launch, host op, call index, collective.
  void emit(PendingTask&& t) {
    collector::TaskRow& r = t.row;
    std::int64_t ext = t.external_id;
    if (t.launch) {
      r.queued_ns = t.launch->ts_ns;
      r.thread_id = t.launch->thread_id;
      if (ext < 0) ext = t.launch->external_id;
    }
    const std::optional<HostOpRef> op = host_ops_.find(ext);
    if (op) {
      r.pytorch_api_id = op->row;
      r.op_type_id = op->name;
      r.input_shapes_id = op->shapes;
      r.input_dtypes_id = op->dtypes;
    } else {
      r.op_type_id = t.own_type;
    }
    r.call_index = sink_.next_call_index(r.name_id);
    if (is(r.task_type, TaskType::kMemcpy)) {
      sink_.add(collector::MemcpyRow{.task_id = r.task_id,
                                     .start_ns = r.start_ns,
                                     .end_ns = r.end_ns,
                                     .queued_ns = r.queued_ns,
                                     .device_id = r.device_id,
                                     .stream_id = r.stream_id,
                                     .bytes = t.bytes,
                                     .copy_kind = t.copy_kind,
                                     .connection_id = r.connection_id});
    }
    if (is(r.task_type, TaskType::kCommunication)) {
      communication(t, t.comm >= 0 ? t.comm : (op ? op->comm : -1));
    }
    sink_.add(std::move(r));
  }

  // ---- communication -----------------------------------------------------------------------------
  // The collective a record_param_comms (or an NCCL kernel with its args) describes: CommInfo index.
  std::int32_t collective_of(const ChromeEvent& e) {
    CommInfo c;
    c.kind = collective_kind(arg_value(e, "Collective name"));
    const auto dtype = torch_dtype(arg_value(e, "dtype"));
    c.dtype = dtype ? static_cast<std::int32_t>(*dtype) : 0;
    const std::int64_t nelems = int_or(arg_value(e, "In msg nelems"), 0);
    c.bytes = nelems * static_cast<std::int64_t>(dtype ? dtype_size(*dtype) : 0);
    std::string_view key = arg_value(e, "Process Group Name");
    if (key.empty()) key = arg_value(e, "Process Group ID");
    std::string_view ranks = arg_value(e, "Process Group Ranks");
    c.communicator = communicator(key, ranks, static_cast<std::int32_t>(int_or(arg_value(e, "Group size"), 0)),
                                  arg_value(e, "Process Group Description"));
    comms_.push_back(c);
    return static_cast<std::int32_t>(comms_.size() - 1);
  }

  // The communicator of a process group: by its name, else by its ranks ("[0, 1]").
  std::int32_t communicator(std::string_view name, std::string_view ranks, std::int32_t size,
                            std::string_view description) {
    std::string members;
    for_each_int(ranks, [&](std::int64_t r) { members += (members.empty() ? "" : ",") + std::to_string(r); });
    const std::string key = name.empty() ? members : std::string(name);
    for (std::size_t i = 0; i < communicators_.size(); ++i) {
      if (communicators_[i].key == key) {
        Communicator& c = communicators_[i];
        if (c.members.empty()) c.members = members;
        if (c.size == 0) c.size = size;
        return static_cast<std::int32_t>(i);
      }
    }
    Communicator c{key, key, members, size, 0};
    if (!description.empty()) c.name = key + " (" + std::string(description) + ")";
    if (c.size == 0 && !members.empty())
      c.size = static_cast<std::int32_t>(std::count(members.begin(), members.end(), ',') + 1);
    communicators_.push_back(std::move(c));
    return static_cast<std::int32_t>(communicators_.size() - 1);
  }

  void communication(const PendingTask& t, std::int32_t comm) {
    const collector::TaskRow& r = t.row;
    CommInfo c;
    if (comm >= 0) {
      c = comms_[static_cast<std::size_t>(comm)];
    } else {
      c.communicator = communicator("", "", 0, "");
    }
    if (!c.kind) c.kind = t.kernel_collective;
    const CollectiveKind kind = c.kind.value_or(CollectiveKind::kAllReduce);
    Communicator& m = communicators_[static_cast<std::size_t>(c.communicator)];
    const bool p2p = kind == CollectiveKind::kSend || kind == CollectiveKind::kRecv;
    sink_.add(collector::CommunicationRow{
        .task_id = r.task_id,
        .communicator_id = c.communicator + 1,
        .sequence = m.sequence++,
        .kind = static_cast<std::int32_t>(kind),
        .algorithm = static_cast<std::int32_t>(p2p ? CollectiveAlgorithm::kPointToPoint : CollectiveAlgorithm::kRing),
        .reduce_op = static_cast<std::int32_t>(
            kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter ? t.reduce : ReduceOp::kNone),
        .dtype = c.dtype,
        .bytes = c.bytes,
        .arrival_ns = r.queued_ns,
        .start_ns = r.start_ns,
        .end_ns = r.end_ns});
  }

  // "ncclKernel_AllReduce_RING_LL_Sum_float(...)", "ncclDevKernel_AllGather_RING_LL(...)".
  static std::optional<CollectiveKind> kernel_collective(std::string_view kernel) {
    const std::size_t at = kernel.find("Kernel_");
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view word = kernel.substr(at + 7);
    word = word.substr(0, std::min(word.find('_'), word.find('(')));
    if (word == "SendRecv") return CollectiveKind::kSend;
    return collective_kind(word);
  }

  void write_communicators() {
    for (std::size_t i = 0; i < communicators_.size(); ++i) {
      const Communicator& c = communicators_[i];
      std::int32_t rank = 0, at = 0;
      bool found = false;
      for_each_int("[" + c.members + "]", [&](std::int64_t r) {
        if (r == rank_ && !found) rank = at, found = true;
        ++at;
      });
      sink_.add(collector::CommunicatorRow{.communicator_id = static_cast<std::int64_t>(i) + 1,
                                           .name_id = sink_.id(c.name),
                                           .rank = rank,
                                           .size = c.size,
                                           .members_id = sink_.id(c.members)});
    }
  }

  // ---- memory, counters ----------------------------------------------------------------------------
  void memory(const ChromeEvent& e) {
    const std::int64_t bytes = int_or(arg_value(e, "Bytes"), 0);
    sink_.add(collector::MemoryRow{.ts_ns = *e.ts_ns + base_ns_,
                                   .device_id = static_cast<std::int32_t>(int_or(arg_value(e, "Device Id"), 0)),
                                   .op = static_cast<std::int32_t>(bytes >= 0 ? MemoryOp::kAlloc : MemoryOp::kFree),
                                   .address = int_or(arg_value(e, "Addr"), 0),
                                   .bytes = bytes >= 0 ? bytes : -bytes,
                                   .allocated_bytes = int_or(arg_value(e, "Total Allocated"), 0),
                                   .reserved_bytes = int_or(arg_value(e, "Total Reserved"), 0),
                                   .thread_id = static_cast<std::int32_t>(int_or(e.tid, 0)),
                                   .seq = ++memory_seq_});
    count_args(e, kMemoryArgs);
  }

  void counter(const ChromeEvent& e) {
    for (const ChromeArg& a : e.args) {
      const auto v = parse_double(a.value);
      if (!v) {
        unmapped("counter value not a number: ", e.name);
        continue;
      }
      text_.assign(e.name);
      if (e.args.size() > 1) text_.append(".").append(a.key);
      sink_.add(collector::CounterRow{.ts_ns = *e.ts_ns + base_ns_,
                                      .device_id = static_cast<std::int32_t>(int_or(e.pid, 0)),
                                      .name_id = sink_.id(text_),
                                      .value = *v});
    }
  }

  // ---- top level -----------------------------------------------------------------------------------
  void top_level(std::string_view key, std::string_view json) {
    if (key == "schemaVersion") return sink_.meta(collector::kMetaSourceVersion, json);
    if (key == "baseTimeNanoseconds" || key == "displayTimeUnit") return;  // Note [Kineto import]
    if (key == "host_name") return sink_.meta(collector::kMetaHostname, json);
    if (key == "deviceProperties") return device_properties(json);
    if (key == "distributedInfo") return distributed_info(json);
    unmapped("top-level member ", key);
  }

  void device_properties(std::string_view json) {
    rapidjson::Document d;
    d.Parse(json.data(), json.size());
    if (d.HasParseError() || !d.IsArray()) return unmapped("top-level member ", "deviceProperties (not a list)");
    for (const auto& p : d.GetArray()) {
      if (!p.IsObject()) continue;
      collector::DeviceInfoRow row;
      const auto get = [&](const char* k) -> const rapidjson::Value* {
        const auto m = p.FindMember(k);
        return m == p.MemberEnd() ? nullptr : &m->value;
      };
      if (const auto* v = get("id"); v && v->IsInt()) row.device_id = v->GetInt();
      if (const auto* v = get("name"); v && v->IsString()) row.name = v->GetString();
      if (const auto* v = get("numSms"); v && v->IsInt()) row.cube_cores = v->GetInt();
      if (const auto* v = get("totalGlobalMem"); v && v->IsInt64()) row.memory_bytes = v->GetInt64();
      sink_.add(std::move(row));
    }
  }

  void distributed_info(std::string_view json) {
    rapidjson::Document d;
    d.Parse(json.data(), json.size());
    if (d.HasParseError() || !d.IsObject()) return unmapped("top-level member ", "distributedInfo (not an object)");
    if (const auto m = d.FindMember("rank"); m != d.MemberEnd() && m->value.IsInt()) {
      rank_ = m->value.GetInt();
      sink_.meta(collector::kMetaRank, std::to_string(rank_));
    }
    if (const auto m = d.FindMember("world_size"); m != d.MemberEnd() && m->value.IsInt())
      sink_.meta(collector::kMetaWorldSize, std::to_string(m->value.GetInt()));
    const auto pgs = d.FindMember("pg_config");
    if (pgs == d.MemberEnd() || !pgs->value.IsArray()) return;
    for (const auto& pg : pgs->value.GetArray()) {
      if (!pg.IsObject()) continue;
      const auto str = [&](const char* k) -> std::string_view {
        const auto m = pg.FindMember(k);
        return m != pg.MemberEnd() && m->value.IsString()
                   ? std::string_view(m->value.GetString(), m->value.GetStringLength())
                   : std::string_view{};
      };
      std::string ranks = "[";
      std::int32_t size = 0;
      if (const auto m = pg.FindMember("ranks"); m != pg.MemberEnd() && m->value.IsArray()) {
        for (const auto& r : m->value.GetArray()) {
          if (!r.IsInt()) continue;
          ranks += (ranks.size() > 1 ? "," : "") + std::to_string(r.GetInt());
        }
      }
      ranks += "]";
      if (const auto m = pg.FindMember("pg_size"); m != pg.MemberEnd() && m->value.IsInt()) size = m->value.GetInt();
      communicator(str("pg_name"), ranks, size, str("pg_desc"));
    }
  }

  // ---- arguments and what is not mapped ------------------------------------------------------------
  static std::string_view arg_value(const ChromeEvent& e, std::string_view key) {
    const ChromeArg* a = e.arg(key);
    return a != nullptr ? a->value : std::string_view{};
  }
  static std::string_view external_id(const ChromeEvent& e) {
    std::string_view v = arg_value(e, "External id");
    return v.empty() ? arg_value(e, "external id") : v;  // PyTorch <= 1.9
  }

  void count_args(const ChromeEvent& e, std::span<const std::string_view> mapped) {
    for (const ChromeArg& a : e.args) {
      if (std::find(mapped.begin(), mapped.end(), a.key) != mapped.end()) continue;
      text_.assign("arg ").append(e.cat).append(".").append(a.key);
      sink_.unmapped(file_, text_);
    }
  }
  void unmapped_event(const ChromeEvent& e) {
    if (!e.cat.empty()) return unmapped("event cat=", e.cat);
    text_.assign("event ph=").append(e.ph);
    if (e.ph == "M") text_.append(" ").append(e.name);
    sink_.unmapped(file_, text_);
  }
  void unmapped(std::string_view what, std::string_view detail) {
    text_.assign(what).append(detail);
    sink_.unmapped(file_, text_);
  }

  collector::StringId pmu_name(std::string_view key) { return sink_.id(key); }

  static constexpr std::array<std::string_view, 2> kStepArgs = {"External id", "Record function id"};
  static constexpr std::array<std::string_view, 4> kPythonArgs = {"Python id", "Python parent id", "Python module id",
                                                                  "Python thread"};
  static constexpr std::array<std::string_view, 10> kHostArgs = {
      "External id", "external id", "Sequence number", "Fwd thread id",    "Input Dims",
      "Input dims",  "Input type",  "Call stack",      "Module Hierarchy", "Record function id"};
  static constexpr std::array<std::string_view, 19> kCommArgs = {
      "External id",        "external id",         "Sequence number",
      "Fwd thread id",      "Input Dims",          "Input dims",
      "Input type",         "Call stack",          "Module Hierarchy",
      "Record function id", "Collective name",     "dtype",
      "In msg nelems",      "Group size",          "Process Group Name",
      "Process Group ID",   "Process Group Ranks", "Process Group Description",
      "Out msg nelems"};
  static constexpr std::array<std::string_view, 4> kRuntimeArgs = {"External id", "external id", "correlation", "cbid"};
  static constexpr std::array<std::string_view, 7> kPmuArgs = {
      "grid",          "block",        "registers per thread",     "shared memory",
      "blocks per SM", "warps per SM", "est. achieved occupancy %"};
  static constexpr std::array<std::string_view, 24> kKernelArgs = {"External id",
                                                                   "external id",
                                                                   "device",
                                                                   "stream",
                                                                   "stream_id",
                                                                   "correlation",
                                                                   "grid",
                                                                   "block",
                                                                   "registers per thread",
                                                                   "shared memory",
                                                                   "blocks per SM",
                                                                   "warps per SM",
                                                                   "est. achieved occupancy %",
                                                                   "Collective name",
                                                                   "dtype",
                                                                   "In msg nelems",
                                                                   "Group size",
                                                                   "Process Group Name",
                                                                   "Process Group ID",
                                                                   "Process Group Ranks",
                                                                   "Process Group Description",
                                                                   "Out msg nelems",
                                                                   "size",
                                                                   "direction"};
  static constexpr std::array<std::string_view, 9> kCopyArgs = {
      "External id", "external id", "device", "stream", "stream_id", "correlation", "bytes", "kind", "size"};
  static constexpr std::array<std::string_view, 6> kMemoryArgs = {"Bytes",           "Addr",           "Device Id",
                                                                  "Total Allocated", "Total Reserved", "Device Type"};

  ImportSink& sink_;
  std::string file_;
  std::int64_t base_ns_ = 0;
  std::int64_t host_rows_ = 0, memory_seq_ = 0;
  std::int32_t rank_ = -1;
  std::unordered_map<std::int32_t, std::vector<OpenOp>> stacks_;
  std::vector<std::int64_t> python_rows_;  // PYTORCH_API id by Python id
  HostOpIndex host_ops_;
  ListIds shape_ids_, dtype_ids_;
  DeviceTaskQueue tasks_;
  std::vector<CommInfo> comms_;
  std::vector<Communicator> communicators_;
  std::string text_;
};

}  // namespace

void import_kineto(const Source& source, ImportSink& sink) { KinetoImporter(source, sink).run(); }

}  // namespace npuscope::importer
