#include "formats.h"

#include <vector>

#include "ascend_db.h"
#include "ascend_text_import.h"
#include "kineto_import.h"

namespace npuscope::importer {

// Each importer adds its line here; detect() asks them in this order.
std::span<const FormatImporter> format_importers() {
  static const std::vector<FormatImporter> kImporters = {
      {Format::kAscendPtDb, &detect_ascend_pt_db, &import_ascend_db},
      {Format::kMsprofDb, &detect_msprof_db, &import_ascend_db},
      {Format::kAscendPtText, &detect_ascend_text, &import_ascend_text},
      {Format::kMsprofFolder, &detect_msprof_folder, &import_msprof_folder},
      {Format::kChromeJson, &detect_ascend_chrome_json, &import_ascend_chrome_json},
      {Format::kKineto, &detect_kineto, &import_kineto},
  };
  return kImporters;
}

}  // namespace npuscope::importer
