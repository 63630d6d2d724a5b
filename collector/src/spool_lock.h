// The locks that tell who still holds a spool: Note [Spool ownership] in trace_spool.h.
#pragma once

#include <string>

namespace npuscope::collector::spool {

// One byte of the spool file each (byte-range locks: any offset may be locked, past the end too).
enum class LockByte : int {
  kOwner = 0,     // shared by everyone who will still write or convert the spool
  kRecovery = 1,  // a recovery converting it
  kWriter = 2,    // the one writer appending to it
};

enum class LockMode { kShared, kExclusive };

// Takes an open-file-description lock on `byte` of `fd` (open for reading and writing). With
// `wait` it blocks until it is free and returns true; without, it returns false when another holder
// has a conflicting lock. Throws TraceError naming `path` when the file system cannot lock.
bool lock(int fd, LockByte byte, LockMode mode, bool wait, const std::string& path);

}  // namespace npuscope::collector::spool
