#include <cmath>
#include <cstdio>

#include "npuscope/collector/csv.h"
#include "npuscope/comparator/format.h"

namespace npuscope::comparator {
namespace {

std::string number(double v, bool applies) {
  if (!applies || !std::isfinite(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

void write_csv(const CompareResult& r, std::ostream& out) {
  out << "op_name,op_type,call_index,tensor,shape,dtype,golden_shape,golden_dtype,cosine,max_abs_err,max_rel_err,"
         "one_thousandth_ratio,five_thousandth_ratio,rmse,rel_euclidean,allclose,verdict,origin,reason,match,task_id,"
         "golden_task_id,pass\n";
  std::string line;
  for (const CompareRow& row : r.rows) {
    const TensorMetrics& m = row.metrics;
    const bool applies = !row.stats_mode && m.comparable;
    line.clear();
    const std::string fields[] = {row.op_name,
                                  row.op_type,
                                  std::to_string(row.call_index),
                                  row.tensor,
                                  row.shape,
                                  row.dtype,
                                  row.golden_shape,
                                  row.golden_dtype,
                                  number(m.cosine, applies),
                                  number(m.max_abs_err, applies),
                                  number(m.max_rel_err, applies),
                                  number(m.one_thousandth_ratio, applies),
                                  number(m.five_thousandth_ratio, applies),
                                  number(m.rmse, applies),
                                  number(m.rel_euclidean, applies),
                                  applies ? (m.allclose ? "true" : "false") : "",
                                  verdict_name(row.verdict),
                                  origin_name(row.origin),
                                  row.reason,
                                  match_name(row.match),
                                  std::to_string(row.npu_task_id),
                                  std::to_string(row.golden_task_id),
                                  row.pass};
    for (std::size_t i = 0; i < std::size(fields); ++i) {
      if (i) line += ',';
      collector::append_csv_field(line, fields[i]);
    }
    out << line << '\n';
  }
}

}  // namespace npuscope::comparator
