#include "formats.h"

#include <vector>

#include "kineto_import.h"

namespace npuscope::importer {

// Each importer adds its line here; detect() asks them in this order.
std::span<const FormatImporter> format_importers() {
  static const std::vector<FormatImporter> kImporters = {
      {Format::kKineto, &detect_kineto, &import_kineto},
  };
  return kImporters;
}

}  // namespace npuscope::importer
