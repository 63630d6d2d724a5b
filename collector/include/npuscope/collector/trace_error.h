#pragma once

#include <stdexcept>

namespace npuscope::collector {

// A trace file cannot be created, opened or read: not an npuscope trace, a newer schema, corrupt,
// or an I/O error. The message names the file and says what to do.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The file is not an SQLite database at all (TraceReader::open): a tool that also reads other kinds
// of files (the CLI, real profiles) can say which it reads.
class NotADatabaseError : public TraceError {
 public:
  using TraceError::TraceError;
};

}  // namespace npuscope::collector
