// Note [Launch time] in launch_times.h.
#include "launch_times.h"

#include <algorithm>

namespace npuscope::analyzer {
namespace {

// Sorts by id and keeps the earliest start of each.
void earliest_per_id(std::vector<std::pair<std::int64_t, std::int64_t>>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first == b.first; }), v.end());
}

}  // namespace

LaunchTimes::LaunchTimes(const collector::TraceReader& trace) {
  needed_ = trace.meta(std::string(collector::kMetaSource)).has_value();
  if (!needed_) return;
  trace.for_each([&](const collector::ApiRow& a) {
    if (a.connection_id != 0) api_by_connection_.emplace_back(a.connection_id, a.start_ns);
  });
  earliest_per_id(api_by_connection_);
  trace.for_each([&](const collector::PytorchApiRow& h) { framework_op_by_id_.emplace_back(h.id, h.start_ns); });
  earliest_per_id(framework_op_by_id_);
}

const LaunchTimes::IdStart* LaunchTimes::find(const std::vector<IdStart>& v, std::int64_t id) {
  const auto it =
      std::lower_bound(v.begin(), v.end(), id, [](const IdStart& e, std::int64_t k) { return e.first < k; });
  return it != v.end() && it->first == id ? &*it : nullptr;
}

std::int64_t LaunchTimes::of(std::int64_t queued_ns, std::int64_t connection_id, std::int64_t pytorch_api_id,
                             std::int64_t start_ns) const {
  if (!needed_ || queued_ns != 0) return queued_ns;
  if (connection_id != 0) {
    if (const IdStart* api = find(api_by_connection_, connection_id)) return api->second;
  }
  if (pytorch_api_id != 0) {
    if (const IdStart* op = find(framework_op_by_id_, pytorch_api_id)) return op->second;
  }
  return start_ns;
}

}  // namespace npuscope::analyzer
