// Creating an output file (a trace or a spool) without clobbering one by accident.
#pragma once

#include <string>

namespace npuscope::collector {

// Throws TraceError if the directory is missing, `path` is a directory, or it exists and !overwrite;
// with overwrite, removes it and its SQLite side files (-wal, -shm, -journal).
void prepare_output_file(const std::string& path, bool overwrite);

// Removes `path` and its SQLite side files, ignoring errors: what a failed create leaves behind.
void remove_output_file(const std::string& path) noexcept;

}  // namespace npuscope::collector
