// Samples read from an external program, written as the rank CSV of the harness's workers so
// that summaries, tables, compare and plot read them like any other system's.
#include <sstream>

#include "common/text_util.h"
#include "harness/external/timing_readers.h"

namespace harness {

SampleTable samples_to_csv(const std::vector<TimingSample>& samples) {
  SampleTable table;
  if (samples.empty()) return table;
  std::vector<std::string> columns;
  for (const char* field : kTimingFields) {
    if (samples.front().fields.count(field)) columns.push_back(field);
  }
  table.derived_iteration = !samples.front().fields.count("iteration_ms");
  std::ostringstream csv;
  csv << "iteration";
  for (const auto& column : columns) csv << "," << column;
  if (table.derived_iteration) csv << ",iteration_ms";
  csv << "\n";
  for (size_t i = 0; i < samples.size(); ++i) {
    const TimingSample& sample = samples[i];
    // A CSV row needs every column; a sample that changes its fields midway is most likely a
    // different kind of line that happens to look like a sample.
    if (sample.fields.size() != columns.size()) {
      table.error =
          MalformedSample{sample.line, "",
                          "this sample has " + std::to_string(sample.fields.size()) +
                              " timing field(s) but the first one had " + join(columns, ", ")};
      return table;
    }
    for (const auto& column : columns) {
      if (!sample.fields.count(column)) {
        table.error = MalformedSample{sample.line, "",
                                      "this sample lacks " + column + ", which the first had"};
        return table;
      }
    }
    csv << sample.iteration.value_or(static_cast<long long>(i));
    double sum = 0;
    for (const auto& column : columns) {
      const double value = sample.fields.at(column);
      sum += value;
      csv << "," << format_number(value);
    }
    if (table.derived_iteration) csv << "," << format_number(sum);
    csv << "\n";
  }
  table.csv = csv.str();
  return table;
}

}  // namespace harness
