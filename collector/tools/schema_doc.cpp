// Writes docs/schema.md from the trace table descriptors (Note [One table, declared once] in
// collector/src/schema.h).
//
//   npuscope_schema_doc [OUTPUT]     (stdout without OUTPUT)
//
// tests/collector/schema_doc_test.cpp fails while the checked-in docs/schema.md differs.
#include <fstream>
#include <iostream>

#include "schema_doc.h"

int main(int argc, char** argv) {
  if (argc > 2) {
    std::cerr << "usage: npuscope_schema_doc [OUTPUT]\n";
    return 2;
  }
  const std::string text = npuscope::collector::schema::markdown();
  if (argc == 1) {
    std::cout << text;
    return std::cout ? 0 : 1;
  }
  std::ofstream file(argv[1], std::ios::binary);
  file << text;
  if (!file.flush()) {
    std::cerr << "npuscope_schema_doc: cannot write " << argv[1] << "\n";
    return 1;
  }
  return 0;
}
