// The error every export (Chrome trace, CSV, .npy) throws for what it cannot write or cannot
// find in the trace. Problems reading the trace itself stay TraceErrors.
#pragma once

#include <stdexcept>

namespace npuscope::collector {

// An export cannot be written (an output file or directory cannot be created or written), or the
// trace lacks what the export needs (no dumped tensor data for .npy). The message names the file
// and says what to do.
class ExportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace npuscope::collector
