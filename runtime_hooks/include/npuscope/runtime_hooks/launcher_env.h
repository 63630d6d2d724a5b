// Which rank of a multi-process job this process is, as its launcher says in the environment.
//
// Note [Launcher environment]
// Every launcher tells its processes their rank in its own variables (REFERENCE.md "Cluster"):
// mpirun (OpenMPI) OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK; torchrun (and torch.distributed's
// env:// rendezvous) RANK / WORLD_SIZE / LOCAL_RANK; Slurm's srun SLURM_PROCID / SLURM_NTASKS /
// SLURM_LOCALID; MPICH and Intel MPI's Hydra PMI_RANK / PMI_SIZE. The first launcher whose rank
// variable is set wins, in that order (an mpirun inside a Slurm allocation sets both, and its own
// numbering is the job's). `npuscope run -o rank_%r.db` names each rank's trace from it, and a
// workload that does not learn its rank from MPI or torch.distributed can announce it from here.
// Header-only: the CLI and the emulator both read it, neither owns it.
#pragma once

#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace npuscope::launcher {

struct LauncherRank {
  int rank = 0;
  int world_size = 0;         // 0: the launcher did not say
  int local_rank = -1;        // -1: the launcher did not say
  const char* launcher = "";  // "mpirun", "torchrun", "srun", "hydra"
};

// A non-negative integer variable; nullopt when unset, empty or not a number.
inline std::optional<int> int_variable(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  const std::string_view text(v);
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < 0) return std::nullopt;
  return n;
}

// `pattern` with every %r replaced by `rank`: traces/rank_%r.db -> traces/rank_3.db.
inline std::string expand_rank(std::string pattern, int rank) {
  const std::string r = std::to_string(rank);
  for (std::size_t at = pattern.find("%r"); at != std::string::npos; at = pattern.find("%r", at + r.size()))
    pattern.replace(at, 2, r);
  return pattern;
}

// The rank as the launcher gives it; nullopt when no known launcher started this process.
inline std::optional<LauncherRank> rank_from_environment() {
  struct Launcher {
    const char *rank, *size, *local_rank, *name;
  };
  static constexpr Launcher kLaunchers[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "mpirun"},
      {"RANK", "WORLD_SIZE", "LOCAL_RANK", "torchrun"},
      {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "srun"},
      {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "hydra"},
  };
  for (const Launcher& l : kLaunchers) {
    const std::optional<int> rank = int_variable(l.rank);
    if (!rank) continue;
    LauncherRank r;
    r.rank = *rank;
    r.world_size = int_variable(l.size).value_or(0);
    r.local_rank = int_variable(l.local_rank).value_or(-1);
    r.launcher = l.name;
    return r;
  }
  return std::nullopt;
}

}  // namespace npuscope::launcher
