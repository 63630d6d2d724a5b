// The trace spool: a flat, append-only log of trace rows that a profiled process writes instead of
// the SQLite database, and that `npuscope run` turns into the database.
//
// Note [Trace spool]
// SQLite costs ~400 ns of CPU per row; a launch-heavy workload makes five rows per op, so writing
// the database inside the profiled process takes as much CPU as the workload itself on a 2-core
// machine, and the process cannot exit before it is done (indexes, WAL checkpoint). Under
// `npuscope run` the injection library therefore writes its rows to a spool (SpoolWriter: framed
// rows appended with write(2), ~20 ns per row), and npuscope run replays it into the trace
// database (replay_spool) on an idle-priority thread while the workload runs, then at full speed
// once it exited: the workload pays only for the spool, as Nsight Systems' and msprof's targets
// pay only for their raw data while the host tool builds the report.
// Durability is the same as the database's: the writer hands its buffer to the kernel at every
// commit (at least every commit_interval), so a workload killed with SIGKILL leaves a spool whose
// last frame may be torn; the replay keeps every whole frame and marks the trace incomplete. When
// `npuscope run` itself is killed too (its whole process group: a CI timeout, the OOM killer, a
// closed terminal), the next command that opens the trace converts the spool it left
// (recover_trace: Note [Recovering a killed run] in trace_recovery.h).
// Without `npuscope run` (NPUSCOPE_INJECTION alone) the injection library writes SQLite itself.
//
// Format (little-endian, version 1): the 16-byte header "NPUSCOPE-SPOOL" \0 \1, then frames
// {u32 kind, u32 payload bytes, payload}; rows are encoded field by field in their table's column
// order (int32, int64 and double as 4/8/8 bytes, text and blobs as a u64 length and the bytes).
// String ids are the writer's own (1, 2, ... in first-use order, as TraceWriter assigns them), and
// the replay checks they come out the same.
//
// Note [Spool ownership]
// A spool may be recovered (converted by whichever command opens its trace next) only once nobody
// will write or convert it any more. Who still holds it is told by open-file-description locks
// (fcntl F_OFD_SETLK) on three bytes of the spool file, which the kernel drops when the holder's
// last descriptor closes, that is when its process dies, however it dies (SIGKILL included):
//   byte 0, the owner byte: shared by everyone who will still write or convert the spool:
//     `npuscope run` (SpoolOwner: it creates the spool, empty, before it starts the program, and
//     holds it until it has converted and removed it) and the spool writer in the profiled program
//     (from creating or opening the spool until finalize; a child forked without exec shares it).
//   byte 1, the recovery byte: held by a recovery while it converts, so that two commands opening
//     one trace at once take turns: the second waits, then finds the spool gone and opens the trace
//     the first made.
//   byte 2, the writer byte: held by the one writer, so that a second profiled process given the
//     same spool fails instead of interleaving its frames with the first's.
// A recovery takes the recovery byte (waiting), then tries the owner byte exclusively without
// waiting: while anyone holds it, the run is alive and the spool is left alone.
// Rejected: a pid file (pids are reused, hidden by pid namespaces, and a killed process cannot
// remove it); flock(2) (one lock per file: a recovery waiting for another could not be told from
// one blocked by a live run, and NFS emulates it with fcntl locks anyway); classic fcntl locks
// (owned by the process, and dropped when it closes any descriptor of the file: npuscope run's
// converter opens and closes the spool beside its SpoolOwner).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "npuscope/collector/trace_reader.h"
#include "npuscope/collector/trace_writer.h"

namespace npuscope::collector {

// A TraceWriter that appends to a spool file. Same contract as TraceWriter::create (refuses an
// existing file unless options.overwrite, but fills an empty one a SpoolOwner made; commit() makes
// the rows so far survive a killed process; finalize() marks the spool complete). It holds the
// spool's owner and writer locks until finalize (Note [Spool ownership]).
std::unique_ptr<TraceWriter> create_spool_writer(const std::string& path, const WriterOptions& options = {});

// npuscope run's hold on its spool (Note [Spool ownership]): creates the spool, empty, before the
// program starts (the writer then fills it), and keeps it from being recovered until destroyed.
// Throws TraceError naming the file when it exists or cannot be created or locked.
class SpoolOwner {
 public:
  explicit SpoolOwner(const std::string& path);
  ~SpoolOwner();
  SpoolOwner(const SpoolOwner&) = delete;
  SpoolOwner& operator=(const SpoolOwner&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

struct SpoolReplay {
  bool complete = false;        // the spool ends with its writer's finalize()
  std::int64_t rows = 0;        // data rows replayed (not META, not strings)
  std::int64_t torn_bytes = 0;  // bytes of a last frame cut short (the writer was killed mid-write)
  // What TraceReader::task_summary() of the trace says, counted on the way: `npuscope run` prints it
  // without scanning the tasks again while the user waits.
  TaskSummary tasks;
};

// Replays the spool at `path` into `out` and finalizes `out` (complete or incomplete, as the spool
// is). While the spool's writer may still be running, `more_may_come` says so: at the end of the
// data the replay then waits for more instead of stopping. Throws TraceError for a file that is not
// a spool or is corrupt (naming the offset), and whatever `out` throws.
SpoolReplay replay_spool(const std::string& path, TraceWriter& out, const std::function<bool()>& more_may_come = {});

}  // namespace npuscope::collector
