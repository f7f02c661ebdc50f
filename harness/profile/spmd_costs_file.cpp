#include "harness/profile/spmd_costs_file.h"

#include <algorithm>
#include <map>

#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/profile/comm_profile.h"

namespace harness {
namespace {

using spmd::Collective;
using spmd::CollectiveFit;

// comm.json's op names.
const std::map<std::string, Collective>& fitted_ops() {
  static const std::map<std::string, Collective> ops = {
      {"allgather", Collective::kAllGather},
      {"allreduce", Collective::kAllReduce},
      {"reducescatter", Collective::kReduceScatter},
      {"alltoall", Collective::kAllToAll}};
  return ops;
}

std::map<Collective, CollectiveFit> usable_fits(const nlohmann::json& doc) {
  std::map<Collective, CollectiveFit> fits;
  for (const CommFit& row : priced_fits(doc)) {
    const auto op = fitted_ops().find(row.op);
    if (op == fitted_ops().end() || !(row.bus_bandwidth > 0)) continue;
    fits[op->second] = {std::max(0.0, row.latency_us) * 1e-6, row.bus_bandwidth};
  }
  return fits;
}

}  // namespace

SpmdCostInputs read_spmd_costs(const std::string& path, double flops_per_s) {
  const nlohmann::json doc = read_json_file(path);
  if (!doc.is_object() || !doc.contains("fits")) {
    throw InputError(path + ": not a comm.json of `harness profile comm` (no 'fits')");
  }
  std::map<Collective, CollectiveFit> fits = usable_fits(doc);
  if (!fits.count(Collective::kAllReduce)) {
    throw InputError(path + ": no all-reduce fit with a positive bandwidth in 'fits'");
  }
  SpmdCostInputs inputs;
  inputs.costs.flops_per_s = flops_per_s;
  inputs.measured_ranks = doc.value("world_size", 0);
  // The closest fitted op, in the order tried.
  const std::pair<Collective, Collective> stand_ins[] = {
      {Collective::kAllGather, Collective::kAllReduce},
      {Collective::kReduceScatter, Collective::kAllGather},
      {Collective::kAllToAll, Collective::kAllGather}};
  for (const auto& [missing, closest] : stand_ins) {
    if (fits.count(missing)) continue;
    fits[missing] = fits.at(closest);
    inputs.substitutions += std::string(inputs.substitutions.empty() ? "" : ", ") +
                            spmd::collective_name(missing) + " priced by the " +
                            spmd::collective_name(closest) + " fit";
  }
  for (const auto& [collective, fit] : fits) inputs.costs.fits[static_cast<int>(collective)] = fit;
  return inputs;
}

}  // namespace harness
