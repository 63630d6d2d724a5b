// The emulator's Transport (emulator/collectives.h) over a torch.distributed process group: the bytes
// of the hccl backend's collectives travel through torch's gloo (Note [The hccl process group] in
// process_group_hccl.h).
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <memory>

#include "npuscope/emulator/collectives.h"

namespace npuscope::pytorch {

// Every call wraps the byte buffers as uint8 CPU tensors (no copy), runs the inner group's
// collective and waits for it. A failure of the inner group (a rank gone, gloo's timeout) becomes
// emulator::CommError, which the emulator reports as the collective's fault.
std::shared_ptr<emulator::Transport> gloo_transport(c10::intrusive_ptr<c10d::ProcessGroup> inner);

}  // namespace npuscope::pytorch
