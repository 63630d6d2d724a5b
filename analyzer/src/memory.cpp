// Device memory: peaks and when, fragmentation at the peak, allocations never freed.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "analyses.h"
#include "rules.h"

namespace npuscope::analyzer {
namespace {}  // namespace

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

namespace {

void run_memory(RuleContext& c) {
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

constexpr const TableSpec* kMemoryTables[] = {&kMemoryTable, &kMemoryDevicesTable, &kLeaksTable};

}  // namespace

extern const Rule kMemoryRule{"memory", "device memory peaks, fragmentation and leaks", run_memory, kMemoryTables};

}  // namespace npuscope::analyzer
