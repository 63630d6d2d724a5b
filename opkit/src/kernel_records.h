// What an opkit kernel run as a device task tells the hook listener (Note [Kernel detail records]
// in hook_api.h): its blocks, its instructions and its sanitizer findings, on the device's clock.
#pragma once

#include <span>

#include "npuscope/emulator/device_spec.h"
#include "npuscope/opkit/launch.h"
#include "npuscope/runtime_hooks/hook_api.h"

namespace npuscope::opkit::detail {

// The task the launch ran as, and where its blocks' cycle counts land on the device timeline.
struct TaskClock {
  std::uint64_t task_id = 0;
  std::uint64_t start_ns = 0;
  double ns_per_cycle = 0;
};

// KernelBlockRecords, and PipeInstructionRecords when the listener wants them, for a launch that ran.
void send_launch(const hooks::SubscriberTable& sub, const TaskClock& clock, const LaunchResult& r);
// One KernelFindingRecord per finding.
void send_findings(const hooks::SubscriberTable& sub, const TaskClock& clock, std::span<const Finding> findings);

}  // namespace npuscope::opkit::detail
