// --diff BASE.db: analyzer::diff of BASE against the viewed trace (NEW), what `npuscope diff BASE.db
// NEW.db` reports, computed on a thread of its own with its own readers while the window stays
// live. It starts when the viewer opens, not when a panel first asks: the Diff panel draws its
// tables and the details panel the selected op's BASE duration, whichever is looked at first.
#pragma once

#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "npuscope/analyzer/diff.h"
#include "npuscope/collector/trace_reader.h"

namespace npuscope::viewer {

class DiffJob {
 public:
  // `base` is opened by the caller, so that a bad BASE is refused before any window opens.
  DiffJob(std::unique_ptr<collector::TraceReader> base, const std::string& new_path);
  // Closing the window cancels a diff still running (DiffOptions::cancel) rather than waiting for it.
  ~DiffJob();
  DiffJob(const DiffJob&) = delete;
  DiffJob& operator=(const DiffJob&) = delete;

  const std::string& base_path() const { return base_path_; }
  // The result once the diff finished; with `wait` (one frame for --screenshot) it waits for it.
  // Null while it runs, or when it failed (error()). Called from the UI thread only.
  const analyzer::DiffResult* result(bool wait);
  const std::string& error() const { return error_; }

 private:
  std::string base_path_;
  std::atomic<bool> cancel_{false};  // declared before running_: outlives the diff that reads it
  std::future<analyzer::DiffResult> running_;
  std::optional<analyzer::DiffResult> result_;
  std::string error_;
};

// What the viewer says of NEW's task `task` against BASE: "base duration: 1.26 us (diff +171 ns,
// ratio 1.14x)" for a paired op, "added: not in BASE" for an op without a pair, "" for a task that
// is not an op (a copy: the diff pairs ops only, Note [What is an op] in vocabulary.h).
std::string describe_pair(const analyzer::DiffResult& diff, const collector::TaskRow& task);

}  // namespace npuscope::viewer
