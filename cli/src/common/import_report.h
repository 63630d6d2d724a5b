// What `npuscope import` and every command given a real profile say of an import.
#pragma once

#include <cstdio>
#include <string>

#include "npuscope/importer/import.h"

namespace npuscope::cli {

// One line: "npuscope: imported SRC (kineto) to T.db: 1,234 tasks, 567 host ops, ..." and, when the
// import passed anything over, the line of what (the whole list: `npuscope import`).
void print_import(std::FILE* out, const importer::Source& source, const std::string& trace,
                  const importer::ImportReport& report, bool every_unmapped);

}  // namespace npuscope::cli
