// Writing what AscendTimeline read (Note [Ascend timeline mapping] in ascend_timeline.h): the host
// ops, then every device task in start order (task ids, call_index per name), the collectives with
// their communicators and links, and the kernel rows no event matched.
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "ascend_names.h"
#include "ascend_timeline_state.h"
#include "tensor_lists.h"

namespace npuscope::importer {
namespace {

using collector::StringId;

struct TaskKey {
  std::int64_t start_ns;
  std::int32_t stream, task;
  bool operator==(const TaskKey&) const = default;
};
struct TaskKeyHash {
  std::size_t operator()(const TaskKey& k) const {  // unsigned: wraps, never overflows
    return static_cast<std::size_t>(k.start_ns) * 1000003u ^
           static_cast<std::size_t>(static_cast<std::uint32_t>(k.stream)) << 20 ^
           static_cast<std::size_t>(static_cast<std::uint32_t>(k.task));
  }
};

// A task to write, in start order: an Ascend Hardware event, a plane event no hardware event has, a
// collective, or a kernel row no event matched.
struct Pending {
  std::int64_t start_ns;
  enum Kind : std::uint8_t { kHw, kLink, kCollective, kKernelRow } kind;
  std::int32_t index;
};

struct LinkTotal {
  std::int64_t bytes = 0, time_ns = 0;
};

class Writer {
 public:
  explicit Writer(AscendTimeline::State& s) : s_(s), sink_(s.sink) {}

  void run() {
    s_.host_ops.write(sink_, s_.in.clock_offset_ns);
    join_links();
    sort_collectives();
    if (s_.in.kernels != nullptr) match_kernel_rows(*s_.in.kernels);
    collective_task_id_.assign(s_.collectives.size(), 0);
    collective_stream_.assign(s_.collectives.size(), -1);
    link_totals();
    std::vector<Pending> pending = collect();
    std::stable_sort(pending.begin(), pending.end(),
                     [](const Pending& a, const Pending& b) { return a.start_ns < b.start_ns; });
    for (const Pending& p : pending) {
      switch (p.kind) {
        case Pending::kHw: hw_task(s_.hw[static_cast<std::size_t>(p.index)]); break;
        case Pending::kLink: link_task(s_.links[static_cast<std::size_t>(p.index)]); break;
        case Pending::kCollective: collective(static_cast<std::size_t>(p.index)); break;
        case Pending::kKernelRow: kernel_row(static_cast<std::size_t>(p.index)); break;
      }
    }
    communication();
    if (!s_.result.steps) kernel_steps();
    if (s_.in.kernels != nullptr) s_.in.kernels->count_unmapped(sink_);
  }

 private:
  // A plane event and the stream's event of the same device task are one task (Note [Ascend timeline mapping]).
  void join_links() {
    std::unordered_map<TaskKey, std::int32_t, TaskKeyHash> by_key;
    by_key.reserve(s_.hw.size());
    for (std::size_t i = 0; i < s_.hw.size(); ++i) {
      const HwTask& t = s_.hw[i];
      by_key.try_emplace(TaskKey{t.start_ns, t.stream, t.task_id}, static_cast<std::int32_t>(i));
    }
    for (std::size_t j = 0; j < s_.links.size(); ++j) {
      LinkTask& l = s_.links[j];
      const auto it = by_key.find(TaskKey{l.start_ns, l.stream, l.task_id});
      if (it == by_key.end()) continue;
      l.hw = it->second;
      s_.hw[static_cast<std::size_t>(it->second)].link = static_cast<std::int32_t>(j);
    }
  }

  // The collective of the same HCCL process running when a link task starts; -1 none.
  std::int32_t collective_of(const LinkTask& l) const {
    const auto& c = s_.collectives;
    auto it = std::upper_bound(c.begin(), c.end(), l.start_ns,
                               [](std::int64_t t, const Collective& x) { return t < x.start_ns; });
    for (int back = 0; back < 16 && it != c.begin(); ++back) {
      --it;
      if (it->pid == l.pid && it->end_ns >= l.start_ns) return static_cast<std::int32_t>(it - c.begin());
    }
    return -1;
  }

  // The bytes and busy time each collective sent to each peer (msprof's communication matrix: the
  // transfers of some bytes, a rank to itself included).
  void link_totals() {
    for (const LinkTask& l : s_.links) {
      const std::int32_t c = collective_of(l);
      if (c < 0) {
        if (l.size > 0) s_.count("HCCL transfer outside any collective");
        continue;
      }
      if (collective_stream_[static_cast<std::size_t>(c)] < 0)
        collective_stream_[static_cast<std::size_t>(c)] = l.stream;
      if (l.size <= 0) continue;
      LinkTotal& t = links_[{c, static_cast<std::int32_t>(l.dst), static_cast<std::int32_t>(l.transport)}];
      t.bytes = collector::add_saturated(t.bytes, l.size);
      t.time_ns = collector::add_saturated(t.time_ns, collector::duration_saturated(l.start_ns, l.end_ns));
      max_rank_ = std::max({max_rank_, l.src, l.dst});
    }
  }

  void sort_collectives() {
    std::stable_sort(s_.collectives.begin(), s_.collectives.end(),
                     [](const Collective& a, const Collective& b) { return a.start_ns < b.start_ns; });
  }

  // Each device event's kernel table row (Note [Kernel details join]); of the rows no event has, a
  // collective's enriches the collective event starting with it, or, when there is none (an export
  // without a timeline), is a collective of its own: one code for both from here on.
  void match_kernel_rows(KernelTable& k) {
    for (HwTask& t : s_.hw) {
      if (t.task_id >= 0) t.kernel_row = k.find(s_.labelled_device(t.pid), t.stream, t.task_id, t.start_ns);
    }
    std::vector<Collective> of_rows;
    for (std::size_t r = 0; r < k.size(); ++r) {
      if (k.found(r) || !k.collective(r)) continue;
      k.take(r);
      if (Collective* c = collective_at(k.start_of(r))) {
        c->kernel_row = static_cast<std::int64_t>(r);
        continue;
      }
      const KernelFields& f = k.read(r);
      of_rows.push_back({.start_ns = f.start_ns,
                         .end_ns = collector::add_saturated(f.start_ns, std::max<std::int64_t>(0, f.dur_ns)),
                         .kernel_row = static_cast<std::int64_t>(r),
                         .name_id = sink_.id(f.name),
                         .name = std::string(f.name),
                         .device = f.device});
    }
    if (of_rows.empty()) return;
    s_.collectives.insert(s_.collectives.end(), std::make_move_iterator(of_rows.begin()),
                          std::make_move_iterator(of_rows.end()));
    sort_collectives();
  }

  // The collective event starting at `start_ns` (within 1 us) without a kernel row yet; null none.
  Collective* collective_at(std::int64_t start_ns) {
    constexpr std::int64_t kSlackNs = 1000;
    auto& c = s_.collectives;
    auto it = std::lower_bound(c.begin(), c.end(), start_ns - kSlackNs,
                               [](const Collective& x, std::int64_t t) { return x.start_ns < t; });
    for (; it != c.end() && it->start_ns <= start_ns + kSlackNs; ++it) {
      if (it->kernel_row < 0) return &*it;
    }
    return nullptr;
  }

  std::int32_t device_of(const Collective& c) const { return c.device >= 0 ? c.device : s_.device_of(c.pid); }

  std::vector<Pending> collect() {
    std::vector<Pending> p;
    p.reserve(s_.hw.size() + s_.links.size() + s_.collectives.size());
    for (std::size_t i = 0; i < s_.hw.size(); ++i) {
      p.push_back({s_.hw[i].start_ns, Pending::kHw, static_cast<std::int32_t>(i)});
    }
    for (std::size_t j = 0; j < s_.links.size(); ++j) {
      if (s_.links[j].hw < 0) p.push_back({s_.links[j].start_ns, Pending::kLink, static_cast<std::int32_t>(j)});
    }
    for (std::size_t c = 0; c < s_.collectives.size(); ++c) {
      p.push_back({s_.collectives[c].start_ns, Pending::kCollective, static_cast<std::int32_t>(c)});
    }
    const KernelTable* k = s_.in.kernels;
    if (k == nullptr) return p;
    for (std::size_t r = 0; r < k->size(); ++r) {  // the rows nothing took: tasks of their own
      if (!k->found(r)) p.push_back({k->start_of(r), Pending::kKernelRow, static_cast<std::int32_t>(r)});
    }
    return p;
  }

  collector::TaskRow row(std::int64_t start_ns, std::int64_t end_ns, StringId name, std::int32_t device) {
    collector::TaskRow r{.task_id = sink_.next_task_id(), .start_ns = s_.t(start_ns), .end_ns = s_.t(end_ns)};
    r.device_id = device;
    r.name_id = name;
    return r;
  }
  void add(collector::TaskRow& r) {
    r.call_index = sink_.next_call_index(r.name_id);
    if (std::find(s_.result.devices.begin(), s_.result.devices.end(), r.device_id) == s_.result.devices.end()) {
      s_.result.devices.push_back(r.device_id);
    }
    sink_.add(r);
  }

  // The host op that launched a device event: by its torch_to_npu flow, else by its CANN call.
  std::int64_t launcher(std::int64_t pid, std::int32_t tid, std::int64_t start_ns, std::int64_t connection,
                        std::int32_t* thread) const {
    if (const auto f = s_.flow_ends.find(FlowEndKey{pid, start_ns, tid}); f != s_.flow_ends.end()) {
      if (const auto st = s_.flow_starts.find(f->second); st != s_.flow_starts.end()) {
        if (const std::int64_t id = s_.host_ops.innermost(st->second.tid, st->second.ts_ns)) {
          *thread = st->second.tid;
          return id;
        }
      }
    }
    if (connection == 0) return 0;
    const auto a = s_.api_by_connection.find(connection);
    if (a == s_.api_by_connection.end()) return 0;
    *thread = a->second.tid;
    return s_.host_ops.innermost(a->second.tid, a->second.start_ns);
  }

  void hw_task(const HwTask& t) {
    collector::TaskRow r = row(t.start_ns, t.end_ns, t.name_id, s_.device_of(t.pid));
    r.stream_id = t.stream;
    r.task_type = static_cast<std::int32_t>(t.type);
    r.connection_id = t.connection_id;
    r.pytorch_api_id = launcher(t.pid, t.tid, t.start_ns, t.connection_id, &r.thread_id);
    if (t.kernel_row >= 0) {
      s_.in.kernels->read(static_cast<std::size_t>(t.kernel_row));
      s_.in.kernels->apply(r, sink_, false);
    } else if (t.args >= 0) {
      event_args(s_.task_args[static_cast<std::size_t>(t.args)], r);
    }
    if (t.link >= 0) r.task_type = static_cast<std::int32_t>(TaskType::kCommunicationTask);
    add(r);
    if (is(r.task_type, TaskType::kMemcpy)) copy(r, t);
  }

  // A copy task's MEMCPY row: its size and direction where the export says them (the event's own
  // size(B) and operation, else the older runtime call's data size and memcpy direction); 0 and
  // unknown where it does not (torch_npu's exports of 2025 and before: docs/import.md).
  void copy(const collector::TaskRow& r, const HwTask& t) {
    CopyInfo c;
    if (t.args >= 0) {
      const TaskArgs& a = s_.task_args[static_cast<std::size_t>(t.args)];
      c = {a.copy_bytes, a.copy_kind};
    }
    if (c.bytes <= 0) {
      if (const auto it = s_.copy_by_connection.find(t.connection_id); it != s_.copy_by_connection.end()) {
        c = it->second;
      } else if (const auto at = s_.copy_by_task.find({t.stream, t.task_id}); at != s_.copy_by_task.end()) {
        c = at->second;
      }
    }
    sink_.add(collector::MemcpyRow{.task_id = r.task_id,
                                   .start_ns = r.start_ns,
                                   .end_ns = r.end_ns,
                                   .device_id = r.device_id,
                                   .stream_id = r.stream_id,
                                   .bytes = std::max<std::int64_t>(0, c.bytes),
                                   .copy_kind = static_cast<std::int32_t>(c.kind),
                                   .connection_id = r.connection_id});
  }

  void event_args(const TaskArgs& a, collector::TaskRow& r) {
    r.op_type_id = a.op_type;
    if (a.block_dim >= 0) r.block_dim = a.block_dim;
    r.input_shapes_id = a.input_shapes;
    r.input_dtypes_id = a.input_dtypes;
    r.input_formats_id = a.input_formats;
    r.output_shapes_id = a.output_shapes;
    r.output_dtypes_id = a.output_dtypes;
    r.output_formats_id = a.output_formats;
    for (std::uint32_t i = a.pmu_begin; i < a.pmu_end; ++i) {
      const auto& [name, value] = s_.task_pmu[i];
      sink_.add(collector::TaskPmuRow{.task_id = r.task_id, .name_id = name, .value = value});
    }
  }

  void link_task(const LinkTask& l) {
    collector::TaskRow r = row(l.start_ns, l.end_ns, l.name_id, s_.device_of(l.pid));
    r.stream_id = l.stream;
    r.task_type = static_cast<std::int32_t>(TaskType::kCommunicationTask);
    add(r);
  }

  void collective(std::size_t i) {
    const Collective& c = s_.collectives[i];
    collector::TaskRow r = row(c.start_ns, c.end_ns, c.name_id, device_of(c));
    r.stream_id = std::max(0, collective_stream_[i]);
    r.task_type = static_cast<std::int32_t>(TaskType::kCommunication);
    r.connection_id = c.connection_id;
    r.op_type_id = sink_.id(hccl_op_type(c.name));
    r.pytorch_api_id = launcher(c.pid, c.tid, c.start_ns, c.connection_id, &r.thread_id);
    if (c.kernel_row >= 0) {
      s_.in.kernels->read(static_cast<std::size_t>(c.kernel_row));
      s_.in.kernels->apply(r, sink_, false);
      r.task_type = static_cast<std::int32_t>(TaskType::kCommunication);
    }
    collective_task_id_[i] = r.task_id;
    add(r);
  }

  void kernel_row(std::size_t row_index) {
    KernelTable& k = *s_.in.kernels;
    k.read(row_index);
    collector::TaskRow r = row(0, 0, 0, s_.in.device_id);
    k.apply(r, sink_, true);  // the row's Device_id, when it has one
    r.start_ns = s_.t(r.start_ns);
    r.end_ns = s_.t(r.end_ns);
    add(r);
  }

  // COMMUNICATOR per group, COMMUNICATION per collective (sequence: its index on the group, the same
  // on every rank), COMMUNICATION_LINK per collective and peer.
  void communication() {
    // (device, name) -> communicator id: the devices of one timeline are members of their own.
    std::map<std::pair<std::int32_t, std::string>, std::int64_t> groups;
    std::map<std::int64_t, std::int32_t> sequence;
    std::vector<std::int64_t> communicator_of(s_.collectives.size(), 0);
    for (std::size_t i = 0; i < s_.collectives.size(); ++i) {
      const Collective& c = s_.collectives[i];
      std::string group;
      if (const auto it = s_.in.collectives.find(c.name); it != s_.in.collectives.end()) group = it->second.group;
      if (group.empty()) {
        const auto t = s_.thread_names.find({c.pid, c.tid});
        group = t != s_.thread_names.end() ? t->second : "HCCL";
      }
      const auto [it, added] =
          groups.try_emplace({device_of(c), std::move(group)}, static_cast<std::int64_t>(groups.size()) + 1);
      communicator_of[i] = it->second;
    }
    std::map<std::int64_t, CommunicatorMembers> members;  // by communicator id
    for (const auto& [key, id] : groups) members[id] = communicator(key.second, id);
    for (std::size_t i = 0; i < s_.collectives.size(); ++i) {
      const Collective& c = s_.collectives[i];
      collector::CommunicationRow r{.task_id = collective_task_id_[i], .communicator_id = communicator_of[i]};
      std::int32_t& next = sequence[communicator_of[i]];
      r.sequence = hccl_sequence(c.name).value_or(next);  // the same on every rank, as the db import's
      ++next;
      r.kind = static_cast<std::int32_t>(hccl_collective_kind(c.name).value_or(CollectiveKind::kAllReduce));
      if (!hccl_collective_kind(c.name)) s_.count("HCCL op of an unknown collective (written as all-reduce)");
      r.algorithm = std::max(0, c.algorithm);
      if (c.dtype >= 0) {
        r.dtype = c.dtype;
        const auto size = static_cast<std::int64_t>(dtype_size(static_cast<DType>(c.dtype)));
        if (c.count > 0 && __builtin_mul_overflow(c.count, size, &r.bytes)) r.bytes = 0;
      }
      r.root_or_peer = -1;
      r.last_rank = std::max(0, s_.in.rank);
      r.arrival_ns = s_.t(c.start_ns);
      r.start_ns = r.arrival_ns;
      if (const auto it = s_.in.collectives.find(c.name); it != s_.in.collectives.end() && it->second.wait_ns > 0) {
        r.start_ns = std::min(s_.t(c.end_ns), collector::add_saturated(r.arrival_ns, it->second.wait_ns));
      }
      r.end_ns = s_.t(c.end_ns);
      sink_.add(r);
    }
    for (const auto& [key, total] : links_) {
      const auto& [c, peer, transport] = key;
      sink_.add(collector::CommunicationLinkRow{
          .task_id = collective_task_id_[static_cast<std::size_t>(c)],
          .peer_rank = members[communicator_of[static_cast<std::size_t>(c)]].world_rank(peer),
          .transport = transport,
          .bytes = total.bytes,
          .time_ns = total.time_ns});
    }
    if (!groups.empty()) {
      s_.result.world_size = static_cast<std::int32_t>(std::max<std::int64_t>(s_.result.world_size, max_rank_ + 1));
    }
  }

  // Its members (Note [Communicator members]): the ranks the transfers (or communication_matrix.json)
  // reached, this rank's place its world rank, unless parallel_group_info says them.
  CommunicatorMembers communicator(const std::string& name, std::int64_t id) {
    std::int32_t seen = static_cast<std::int32_t>(std::min<std::int64_t>(max_rank_ + 1, 1 << 20));
    if (const auto it = s_.in.group_size_seen.find(name); it != s_.in.group_size_seen.end()) {
      seen = std::max(seen, it->second);
    }
    CommunicatorMembers m = communicator_members(s_.in.group_ranks, name, s_.in.rank, seen, s_.in.rank);
    s_.result.world_size = std::max(s_.result.world_size, m.size);
    sink_.add(collector::CommunicatorRow{.communicator_id = id,
                                         .name_id = sink_.id(name),
                                         .rank = m.rank,
                                         .size = m.size,
                                         .members_id = sink_.id(m.list)});
    return m;
  }

  // Without ProfilerStep markers (an export without trace_view.json): the kernels' Step Id spans.
  void kernel_steps() {
    if (s_.in.kernels == nullptr) return;
    for (const auto& [step, span] : s_.in.kernels->steps()) {
      const std::string name = "ProfilerStep#" + std::to_string(step);
      sink_.add(collector::MarkerRow{.start_ns = s_.t(span.first),
                                     .end_ns = s_.t(span.second),
                                     .name_id = sink_.id(name),
                                     .kind = static_cast<std::int32_t>(MarkerKind::kStep),
                                     .step = step});
      s_.result.steps = true;
    }
  }

  AscendTimeline::State& s_;
  ImportSink& sink_;
  std::vector<std::int64_t> collective_task_id_;
  std::vector<std::int32_t> collective_stream_;
  std::map<std::tuple<std::int32_t, std::int32_t, std::int32_t>, LinkTotal> links_;  // (collective, peer, transport)
  std::int64_t max_rank_ = -1;
};

}  // namespace

void write_timeline(AscendTimeline::State& s) {
  Writer(s).run();
  s.flush_counts();
}

}  // namespace npuscope::importer
