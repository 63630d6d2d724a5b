// Device memory: peaks and when, fragmentation at the peak, allocations never freed.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "analyses.h"

namespace npuscope::analyzer {
namespace {
}  // namespace

MemoryReport memory_usage(const TraceData& data, int top) {
  std::map<std::int32_t, DeviceMemory> devices;
  std::map<std::int32_t, std::unordered_map<std::int64_t, Leak>> live;  // per device, by address
  for (const MemoryRow& m : data.memory) {  // in time order
    DeviceMemory& d = devices[m.device_id];
    d.device_id = m.device_id;
    if (m.allocated_bytes > d.peak_allocated_bytes) {
      d.peak_allocated_bytes = m.allocated_bytes;
      d.peak_allocated_ns = m.ts_ns;
      d.fragmentation_at_peak =
          m.reserved_bytes > 0 ? static_cast<double>(m.reserved_bytes - m.allocated_bytes) / static_cast<double>(m.reserved_bytes) : 0;
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
    for (const Leak& l : leaks) d.leaked_bytes += l.bytes;
    std::sort(leaks.begin(), leaks.end(), [](const Leak& a, const Leak& b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.ts_ns < b.ts_ns;
    });
    leaks.resize(std::min<std::size_t>(leaks.size(), static_cast<std::size_t>(std::max(top, 0))));
    d.largest_leaks = std::move(leaks);
    r.peak_allocated_bytes = std::max(r.peak_allocated_bytes, d.peak_allocated_bytes);
    r.peak_reserved_bytes = std::max(r.peak_reserved_bytes, d.peak_reserved_bytes);
    r.leaked_bytes += d.leaked_bytes;
    r.devices.push_back(std::move(d));
  }
  return r;
}

}  // namespace npuscope::analyzer
