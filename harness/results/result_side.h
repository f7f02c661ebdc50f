// One side of a comparison (`harness compare`, `harness ab`): a results folder of `harness
// run`, or a folder holding several of them from the same study (`harness ab` writes one per
// round and build). Its runs are the complete repeats of all its folders: each run is one
// launch of the ranks, the unit a verdict rests on.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "harness/results/report_samples.h"

namespace harness {

struct ResultSide {
  std::filesystem::path path;
  std::vector<ResultSamples> folders;  // by folder name: the UTC stamps sort by time
};

// Throws InputError when `path` is neither a results folder nor a folder with results folders
// up to two levels below (`<path>/<experiment>/<stamp>/`), or when its folders are not one
// study (their manifests or ranks' configurations differ) of one revision.
ResultSide read_result_side(const std::filesystem::path& path);

// "" when the two sides ran the same study (manifests and every run configuration equal, the
// number of repeats aside); else the first difference, e.g. "p000 / overlap: model.batch_size
// 32 vs 36" or "manifest: points[0].iterations 40 vs 20".
std::string study_difference(const ResultSide& base, const ResultSide& candidate);

// The machine a results folder ran on as its env.json names it: host, CPU model and logical
// cores ("" when it has no env.json). A side's folders all ran on one.
std::string machine_of(const ResultSamples& folder);

}  // namespace harness
