// Recovering the trace of a killed `npuscope run` from the spool it left.
//
// Note [Recovering a killed run]
// `npuscope run` turns the profiled program's spool into the trace once the program has exited
// (Note [Trace spool] in trace_spool.h). When its whole process group is killed (a CI timeout, the
// OOM killer, a closed terminal) nothing does: OUT.db is missing (or a half-built OUT.db.part is
// there) and OUT.db.spool holds everything the program had handed to the kernel. So every command
// that opens a trace (analyze, export, compare, view, the viewer) calls recover_trace first, as
// Nsight Systems imports the .qdstrm a killed capture left when its report is opened:
//  1. No spool beside the trace: nothing to do (one stat), the trace is opened as it is.
//  2. The recovery lock is taken, waiting for a recovery already running (Note [Spool ownership]).
//     If that one removed the spool meanwhile, its trace is opened: the loser uses the winner's.
//  3. The owner lock is tried: while held, the run or its program is alive and the spool is left
//     alone; the trace opens if the run already renamed it into place, else a TraceError says the
//     run is still writing it.
//  4. A trace that opens already (the run was killed between renaming it and removing the spool) is
//     left as it is, and so is the spool: both are the same data.
//  5. An empty spool (the run was killed before its program recorded anything) recovers nothing: a
//     TraceError says so, and the file stays for the user to see.
//  6. Otherwise the spool is replayed into a temporary file beside the trace (OUT.db.recover-PID;
//     a half-built OUT.db.part and temporary files of killed recoveries are removed first), which
//     is renamed over OUT.db (a 0-byte or damaged OUT.db is replaced) and then the spool is removed,
//     as `npuscope run` does: at every moment either the spool or a whole trace is there.
// The replay keeps every whole frame (a torn last frame is counted in stat.spool_torn_bytes); the
// trace is marked incomplete unless the spool ends with its writer's finalize (then the program
// had finished recording and only the conversion was killed). Errors (a corrupt spool, a file or a
// directory the user cannot write) are TraceErrors naming the file and what to do; the spool is kept.
#pragma once

#include <string>

#include "npuscope/collector/trace_spool.h"

namespace npuscope::collector {

struct TraceRecovery {
  std::string trace;       // the trace to open
  std::string spool;       // trace + ".spool"
  bool recovered = false;  // this call made `trace` from `spool`
  SpoolReplay replay;      // what the spool held (when recovered)
};

// The trace at `path`, recovered from the spool a killed run left beside it when there is one and
// nobody writes it any more (Note [Recovering a killed run]). `path` may name the spool itself
// (OUT.db.spool: the trace is OUT.db). Opens nothing when there is no spool. Thread-safe and safe
// across processes. Throws TraceError.
TraceRecovery recover_trace(const std::string& path);

// One line for the user about a recovery: "recovered OUT.db from OUT.db.spool left by a run that
// was killed: N rows, the trace is marked incomplete".
std::string describe(const TraceRecovery& recovery);

}  // namespace npuscope::collector
