#pragma once

#include <stdexcept>

namespace npuscope::collector {

// A trace file cannot be created, opened or read: not an npuscope trace, a newer schema, corrupt,
// or an I/O error. The message names the file and says what to do.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace npuscope::collector
