// Device memory: peaks and when, fragmentation at the peak, allocations never freed; on a real
// profile, the ops holding the most memory (OP_MEMORY).
#include <algorithm>
#include <map>
#include <queue>
#include <unordered_map>

#include "analyses.h"
#include "rules.h"

namespace npuscope::analyzer {
namespace {

// The `top` largest blocks of OP_MEMORY, largest first (longer held first among equals), kept in a
// bounded heap while the rows stream past: a long profile's table may be large.
std::vector<collector::OpMemoryRow> largest_op_blocks(const collector::TraceReader& reader, int top) {
  const auto held = [](const collector::OpMemoryRow& b) {
    return b.allocation_ns >= 0 && b.release_ns >= b.allocation_ns ? b.release_ns - b.allocation_ns : -1;
  };
  const auto before = [&](const collector::OpMemoryRow& a, const collector::OpMemoryRow& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (held(a) != held(b)) return held(a) > held(b);
    return a.allocation_ns < b.allocation_ns;
  };
  std::priority_queue<collector::OpMemoryRow, std::vector<collector::OpMemoryRow>, decltype(before)> heap(before);
  const auto keep = static_cast<std::size_t>(std::max(top, 0));
  reader.for_each([&](const collector::OpMemoryRow& b) {
    if (keep == 0) return;
    if (heap.size() < keep) {
      heap.push(b);
    } else if (before(b, heap.top())) {
      heap.pop();
      heap.push(b);
    }
  });
  std::vector<collector::OpMemoryRow> out;
  for (; !heap.empty(); heap.pop()) out.push_back(heap.top());
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

MemoryReport memory_usage(const TraceData& data, int top) {
  std::map<std::int32_t, DeviceMemory> devices;
  std::map<std::int32_t, std::unordered_map<std::int64_t, Leak>> live;  // per device, by address
  for (const MemoryRow& m : data.memory) {                              // in time order
    DeviceMemory& d = devices[m.device_id];
    d.device_id = m.device_id;
    if (m.allocated_bytes > d.peak_allocated_bytes) {
      d.peak_allocated_bytes = m.allocated_bytes;
      d.peak_allocated_ns = m.ts_ns;
      d.fragmentation_at_peak = m.reserved_bytes > 0 ? static_cast<double>(m.reserved_bytes - m.allocated_bytes) /
                                                           static_cast<double>(m.reserved_bytes)
                                                     : 0;
    }
    if (m.reserved_bytes > d.peak_reserved_bytes) {
      d.peak_reserved_bytes = m.reserved_bytes;
      d.peak_reserved_ns = m.ts_ns;
    }
    if (is(m.op, MemoryOp::kAlloc)) {
      ++d.allocations;
      live[m.device_id][m.address] = Leak{m.address, m.bytes, m.ts_ns};
    } else if (is(m.op, MemoryOp::kFree)) {
      live[m.device_id].erase(m.address);
    }
  }
  MemoryReport r;
  for (auto& [id, d] : devices) {
    std::vector<Leak> leaks;
    for (const auto& [address, leak] : live[id]) leaks.push_back(leak);
    d.leaked_count = static_cast<std::int64_t>(leaks.size());
    for (const Leak& l : leaks) d.leaked_bytes = add_ns(d.leaked_bytes, l.bytes);
    std::sort(leaks.begin(), leaks.end(),
              [](const Leak& a, const Leak& b) { return a.bytes != b.bytes ? a.bytes > b.bytes : a.ts_ns < b.ts_ns; });
    leaks.resize(std::min<std::size_t>(leaks.size(), static_cast<std::size_t>(std::max(top, 0))));
    d.largest_leaks = std::move(leaks);
    r.peak_allocated_bytes = std::max(r.peak_allocated_bytes, d.peak_allocated_bytes);
    r.peak_reserved_bytes = std::max(r.peak_reserved_bytes, d.peak_reserved_bytes);
    r.leaked_bytes = add_ns(r.leaked_bytes, d.leaked_bytes);
    r.devices.push_back(std::move(d));
  }
  return r;
}

namespace {

constexpr Column kMemoryColumns[] = {
    {"peak_allocated_bytes", Unit::kBytes, "the largest device's allocated peak"},
    {"peak_reserved_bytes", Unit::kBytes, "the largest device's reserved peak"},
    {"leaked_bytes", Unit::kBytes, "bytes never freed before the trace ended, all devices", "never freed"},
};
constexpr Column kMemoryDeviceColumns[] = {
    {"device_id", Unit::kId, "the NPU device", "device"},
    {"peak_allocated_bytes", Unit::kBytes, "its allocated peak", "peak alloc"},
    {"peak_allocated_at_ns", Unit::kNs, "when it was reached", "at"},
    {"peak_reserved_bytes", Unit::kBytes, "its reserved (cached) peak"},
    {"peak_reserved_at_ns", Unit::kNs, "when it was reached", "", true},
    {"fragmentation_pct", Unit::kPercent, "(reserved - allocated) / reserved at the allocated peak", "frag"},
    {"allocations", Unit::kCount, "allocations made", "allocs"},
    {"leaked_count", Unit::kCount, "allocations never freed", "leaks"},
    {"leaked_bytes", Unit::kBytes, "their bytes", "leaked"},
};
constexpr Column kLeakColumns[] = {
    {"device_id", Unit::kId, "the NPU device", "device"},
    {"address", Unit::kAddress, "the allocation's device address"},
    {"bytes", Unit::kBytes, "its size", "size"},
    {"allocated_at_ns", Unit::kNs, "when it was allocated", "allocated at"},
};

constexpr Column kOpMemoryColumns[] = {
    {"op_name", Unit::kOpName, "the op that allocated the block"},
    {"device_id", Unit::kId, "the NPU device", "device"},
    {"bytes", Unit::kBytes, "the block's size", "size"},
    {"allocated_at_ns", Unit::kNs, "when it was allocated (null: before the profile began)", "allocated at"},
    {"released_at_ns", Unit::kNs, "when the op released it (null: not while the profile ran)", "released at"},
    {"held_ns", Unit::kNs, "how long the op held it (null: not both in the profile)", "held"},
    {"active_held_ns", Unit::kNs, "until the allocator took it back (torch_npu's Active Duration)", "", true},
};

}  // namespace

constexpr TableSpec kMemoryTable{"memory", "Device memory", "Peaks and leaks over all devices.", kMemoryColumns,
                                 Layout::kRecord};
constexpr TableSpec kMemoryDevicesTable{"memory_devices", "Device memory per device",
                                        "Per device: peaks and when, fragmentation, allocations never freed.",
                                        kMemoryDeviceColumns};
constexpr TableSpec kLeaksTable{"leaks",
                                "Allocations never freed",
                                "Per device, the largest allocations never freed (--top), biggest first.",
                                kLeakColumns,
                                Layout::kRows,
                                Section::kDetail,
                                "release tensors you no longer need (a growing cache or list keeps them alive)"};

constexpr TableSpec kOpMemoryTable{"op_memory", "Ops holding the most memory",
                                   "A real profile's per-op blocks (OP_MEMORY: torch_npu's operator_memory, msprof's "
                                   "NPU_OP_MEM), the largest first (--top), as MindStudio Insight's memory view "
                                   "lists them; only when the trace has them.",
                                   kOpMemoryColumns};

namespace {

// OP_MEMORY's largest blocks, when the trace has any.
void add_op_memory(RuleContext& c) {
  const auto ns_or_null = [](std::int64_t v) { return v >= 0 ? Value(v) : Value(); };
  for (const collector::OpMemoryRow& b : largest_op_blocks(c.data.reader, c.top)) {
    const bool released = b.allocation_ns >= 0 && b.release_ns >= b.allocation_ns;
    const bool active = b.allocation_ns >= 0 && b.active_release_ns >= b.allocation_ns;
    c.add(kOpMemoryTable, {c.data.str(b.name_id), std::int64_t{b.device_id}, b.bytes, ns_or_null(b.allocation_ns),
                           ns_or_null(b.release_ns), released ? Value(b.release_ns - b.allocation_ns) : Value(),
                           active ? Value(b.active_release_ns - b.allocation_ns) : Value()});
  }
}

void run_memory(RuleContext& c) {
  add_op_memory(c);
  const MemoryReport m = memory_usage(c.data, c.top);
  if (m.devices.empty()) return;  // no memory records: nothing to say
  // A real profile records a window of the run: a block freed after it ends is no leak (Note
  // [Emulated-only rules]); the leak cells are null there.
  const bool leaks = !c.data.imported();
  const auto leak = [&](std::int64_t v) { return leaks ? Value(v) : Value(); };
  c.add(kMemoryTable, {m.peak_allocated_bytes, m.peak_reserved_bytes, leak(m.leaked_bytes)});
  for (const DeviceMemory& d : m.devices) {
    c.add(kMemoryDevicesTable, {std::int64_t{d.device_id}, d.peak_allocated_bytes, d.peak_allocated_ns,
                                d.peak_reserved_bytes, d.peak_reserved_ns, 100 * d.fragmentation_at_peak, d.allocations,
                                leak(d.leaked_count), leak(d.leaked_bytes)});
    if (!leaks) continue;
    for (const Leak& l : d.largest_leaks) c.add(kLeaksTable, {std::int64_t{d.device_id}, l.address, l.bytes, l.ts_ns});
  }
  if (!leaks) {
    c.leave_out("memory's leaks (a profile records a window of the run: a block freed after it is no leak)",
                &kLeaksTable);
  }
}

constexpr const TableSpec* kMemoryTables[] = {&kMemoryTable, &kMemoryDevicesTable, &kLeaksTable, &kOpMemoryTable};

}  // namespace

extern const Rule kMemoryRule{"memory", "device memory peaks, fragmentation and leaks; the ops holding the most",
                              run_memory, kMemoryTables};

}  // namespace npuscope::analyzer
