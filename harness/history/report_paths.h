// Where `history report` puts each page and chart: one place, read by the report writer and by
// `history check`, whose comment links to the page of every change it names.
#pragma once

#include <string>

#include "harness/history/history_records.h"

namespace harness {

// "index.html"
std::string report_index_page();
// The page of one benchmark in one environment: "b-<slug>-e<N>.html".
std::string benchmark_page(const std::string& benchmark, size_t environment);
// A chart: "charts/<benchmark slug>-<metric slug>-e<N>.svg".
std::string chart_file(const MetricKey& key, size_t environment);
// The anchor of a metric's chart on its benchmark's page: "m-<metric slug>".
std::string chart_anchor(const std::string& metric);

}  // namespace harness
