#include "trace_data.h"

namespace npuscope::analyzer {

TraceData::TraceData(const collector::TraceReader& r) : reader(r) {
  r.for_each_task([this](const TaskRow& t) {
    if (t.device_id < 0) return;  // the cpu golden backend: not a device to analyse
    all_tasks.push_back(t);
    if (is_kernel(t)) kernels.push_back(t);
  });
  apis = r.apis();
  memory = r.memory();
  memcpys = r.memcpys();
  for (DeviceInfoRow& d : r.devices()) devices.emplace(d.device_id, std::move(d));
}

}  // namespace npuscope::analyzer
