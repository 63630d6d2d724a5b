// emulator::Transport over an MPI communicator (Note [MPI world] in npuscope/comm/mpi_world.h).
#pragma once

#include <mpi.h>

#include <memory>

#include "npuscope/emulator/collectives.h"

namespace npuscope::comm {

// Throws emulator::CommError naming the MPI call and MPI's own message when rc is not MPI_SUCCESS.
void check_mpi(int rc, const char* call);

// Takes ownership of `comm` (freed with the transport, unless MPI was finalized first).
std::shared_ptr<emulator::Transport> mpi_transport(MPI_Comm comm);

}  // namespace npuscope::comm
