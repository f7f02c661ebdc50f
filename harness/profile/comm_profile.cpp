#include "harness/profile/comm_profile.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/input_error.h"
#include "common/limits.h"
#include "common/statistics.h"
#include "common/text_util.h"
#include "runtime/protocol/comm_ops.h"

namespace harness {

nlohmann::json to_json(const CommFit& fit) {
  return {{"op", fit.op},
          {"latency_us", fit.latency_us},
          {"bus_bandwidth_bytes_per_s", fit.bus_bandwidth},
          {"r_squared", fit.r_squared},
          {"cpu_cores_per_rank", fit.cpu_cores}};
}

std::vector<CommFit> comm_fits(const nlohmann::json& comm) {
  std::vector<CommFit> fits;
  if (!comm.is_object() || !comm.contains("fits") || !comm.at("fits").is_array()) return fits;
  for (const auto& row : comm.at("fits")) {
    if (!row.is_object() || row.value("op", "").empty()) continue;
    fits.push_back({row.value("op", ""), row.value("latency_us", 0.0),
                    row.value("bus_bandwidth_bytes_per_s", 0.0), row.value("r_squared", 0.0),
                    row.value("cpu_cores_per_rank", 0.0)});
  }
  return fits;
}

int64_t parse_byte_size(const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw InputError("size '" + text + "': expected a number with an optional K, M or G");
  }
  const std::string suffix = text.substr(used);
  double scale = 1;
  if (suffix == "K" || suffix == "k")
    scale = 1024.0;
  else if (suffix == "M" || suffix == "m")
    scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (!suffix.empty() && suffix != "B") {
    throw InputError("size '" + text + "': unknown unit '" + suffix + "' (use K, M or G)");
  }
  if (!(value > 0)) throw InputError("size '" + text + "': must be > 0");
  if (!(value * scale <= static_cast<double>(kMaxCommBytes))) {
    throw InputError("size '" + text + "': at most 1G (" + std::to_string(kMaxCommBytes) +
                     " bytes) per message");
  }
  return static_cast<int64_t>(std::llround(value * scale));
}

std::vector<int64_t> parse_size_range(const std::string& text) {
  if (text.find(':') == std::string::npos) {
    std::vector<int64_t> sizes;
    for (const auto& part : split(text, ',')) sizes.push_back(parse_byte_size(part));
    if (static_cast<long long>(sizes.size()) > kMaxCommSizes) {
      throw InputError("sizes '" + text + "': more than " + std::to_string(kMaxCommSizes) +
                       " sizes");
    }
    return sizes;
  }
  const auto parts = split(text, ':');
  if (parts.size() != 3 || parts[2].size() < 2 || (parts[2][0] != 'x' && parts[2][0] != '+')) {
    throw InputError("sizes '" + text + "': expected first:last:xFACTOR or first:last:+STEP");
  }
  const int64_t first = parse_byte_size(parts[0]), last = parse_byte_size(parts[1]);
  if (last < first) throw InputError("sizes '" + text + "': last is below first");
  std::vector<int64_t> sizes;
  const auto too_many = [&] {
    return InputError("sizes '" + text + "': more than " + std::to_string(kMaxCommSizes) +
                      " sizes (use a larger factor or step)");
  };
  if (parts[2][0] == 'x') {
    const double factor = parse_whole_number(parts[2].substr(1)).value_or(0);
    if (!(factor > 1)) {
      throw InputError("sizes '" + text + "': the factor must be a number > 1");
    }
    for (double s = static_cast<double>(first); s <= static_cast<double>(last) * (1 + 1e-12);
         s *= factor) {
      if (static_cast<long long>(sizes.size()) == kMaxCommSizes) throw too_many();
      sizes.push_back(static_cast<int64_t>(std::llround(s)));
    }
  } else {
    const int64_t step = parse_byte_size(parts[2].substr(1));
    if ((last - first) / step + 1 > kMaxCommSizes) throw too_many();
    for (int64_t s = first; s <= last; s += step) sizes.push_back(s);
  }
  return sizes;
}

double bus_factor(const std::string& op, int n) {
  if (op == "allreduce") return 2.0 * (n - 1) / n;
  if (op == "allgather" || op == "reducescatter" || op == "alltoall") {
    return static_cast<double>(n - 1) / n;
  }
  return 1.0;  // broadcast, sendrecv, pingpong (its time is one way), copy
}

std::vector<CommRow> comm_rows(const nlohmann::json& measurement) {
  const int n = measurement.at("world_size").get<int>();
  std::vector<CommRow> rows;
  for (const auto& entry : measurement.at("entries")) {
    CommRow row;
    row.op = entry.at("op").get<std::string>();
    row.bytes = entry.at("bytes").get<int64_t>();
    const auto times = entry.at("times_ms").get<std::vector<double>>();
    const SampleSummary stats = summarize(times);
    row.samples = stats.count;
    row.p50_ms = stats.p50;
    row.p90_ms = stats.p90;
    row.mean_ms = stats.mean;
    if (row.p50_ms > 0 && row.op != runtime::kHandOverOp) {  // a call's time, no transfer's
      row.algbw_gbps = static_cast<double>(row.bytes) / (row.p50_ms * 1e-3) / 1e9;
      row.busbw_gbps = row.algbw_gbps * bus_factor(row.op, n);
    }
    if (entry.contains("cpu_ms")) {
      for (double ms : times) row.wall_ms_total += ms;
      for (double ms : entry.at("cpu_ms").get<std::vector<double>>()) row.cpu_ms_total += ms;
      if (row.wall_ms_total > 0) row.cpu_cores = row.cpu_ms_total / row.wall_ms_total;
    }
    if (entry.contains("send_call_ms")) {
      row.send_call_p50_ms = summarize(entry.at("send_call_ms").get<std::vector<double>>()).p50;
    }
    rows.push_back(row);
  }
  return rows;
}

std::vector<CommRow> comm_rows_of(const nlohmann::json& comm) {
  std::vector<CommRow> rows;
  for (const auto& entry : comm.value("rows", nlohmann::json::array())) {
    if (!entry.is_object() || !entry.contains("op") || !entry.at("op").is_string()) continue;
    CommRow row;
    row.op = entry.at("op").get<std::string>();
    row.bytes = entry.value("bytes", int64_t{0});
    row.p50_ms = entry.value("p50_ms", 0.0);
    row.mean_ms = entry.value("mean_ms", 0.0);
    rows.push_back(row);
  }
  return rows;
}

CommFit fit_comm_model(const std::vector<CommRow>& rows, const std::string& op, int n,
                       CommTime time) {
  const auto seconds = [time](const CommRow& row) {
    return (time == CommTime::kMean && row.mean_ms > 0 ? row.mean_ms : row.p50_ms) * 1e-3;
  };
  // Ordinary least squares of t (seconds) on x = bytes * bus factor: t = a + x / B.
  double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
  double cpu_ms = 0, wall_ms = 0;
  int count = 0;
  for (const auto& row : rows) {
    if (row.op != op) continue;
    const double x = static_cast<double>(row.bytes) * bus_factor(op, n);
    const double y = seconds(row);
    sx += x, sy += y, sxx += x * x, sxy += x * y, syy += y * y;
    cpu_ms += row.cpu_ms_total, wall_ms += row.wall_ms_total;
    ++count;
  }
  CommFit fit;
  fit.op = op;
  if (wall_ms > 0) fit.cpu_cores = cpu_ms / wall_ms;  // the large sizes weigh most
  if (count < 2) return fit;
  const double denominator = count * sxx - sx * sx;
  if (denominator <= 0) return fit;
  const double slope = (count * sxy - sx * sy) / denominator;
  const double intercept = (sy - slope * sx) / count;
  fit.latency_us = intercept * 1e6;
  fit.bus_bandwidth = slope > 0 ? 1.0 / slope : 0;
  const double total = syy - sy * sy / count;
  double residual = 0;
  for (const auto& row : rows) {
    if (row.op != op) continue;
    const double x = static_cast<double>(row.bytes) * bus_factor(op, n);
    const double e = seconds(row) - (intercept + slope * x);
    residual += e * e;
  }
  fit.r_squared = total > 0 ? 1 - residual / total : 1;
  return fit;
}

std::vector<CommFit> priced_fits(const nlohmann::json& comm) {
  std::vector<CommFit> fits = comm_fits(comm);
  const int world = comm.value("world_size", 0);
  if (world < 2) return fits;
  const std::vector<CommRow> rows = comm_rows_of(comm);
  for (CommFit& fit : fits) {
    if (fit.op != "allreduce" && fit.op != "allgather" && fit.op != "reducescatter" &&
        fit.op != "alltoall") {
      continue;
    }
    const bool has_means = std::any_of(rows.begin(), rows.end(), [&](const CommRow& row) {
      return row.op == fit.op && row.mean_ms > 0;
    });
    if (!has_means) continue;
    const CommFit mean = fit_comm_model(rows, fit.op, world, CommTime::kMean);
    if (!(mean.bus_bandwidth > 0)) continue;
    fit.latency_us = mean.latency_us;
    fit.bus_bandwidth = mean.bus_bandwidth;
    fit.r_squared = mean.r_squared;
  }
  return fits;
}

CommFit fit_or_largest(const std::vector<CommRow>& rows, const std::string& op, int n) {
  CommFit fit = fit_comm_model(rows, op, n);
  if (fit.bus_bandwidth > 0) return fit;
  const CommRow* largest = nullptr;
  for (const auto& row : rows) {
    if (row.op == op && row.p50_ms > 0 && (!largest || row.bytes > largest->bytes)) largest = &row;
  }
  if (largest) {
    fit.latency_us = 0;
    fit.bus_bandwidth = largest->busbw_gbps * 1e9;
  }
  return fit;
}

std::string render_comm_table(const std::vector<CommRow>& rows, int n, const std::string& backend) {
  std::ostringstream out;
  char line[256];
  out << "# " << backend << ", " << n << " ranks; times are p50/p90 per operation; "
      << "busbw = algbw x bus factor (nccl-tests)\n";
  std::snprintf(line, sizeof line, "#%14s %14s %6s %12s %12s %11s %11s\n", "size(B)", "op", "n",
                "p50(us)", "p90(us)", "algbw(GB/s)", "busbw(GB/s)");
  out << line;
  for (const auto& row : rows) {
    std::snprintf(line, sizeof line, " %14lld %14s %6zu %12.1f %12.1f %11.3f %11.3f\n",
                  static_cast<long long>(row.bytes), row.op.c_str(), row.samples, row.p50_ms * 1e3,
                  row.p90_ms * 1e3, row.algbw_gbps, row.busbw_gbps);
    out << line;
  }
  return out.str();
}

namespace {

double fitted_bandwidth(const std::vector<CommFit>& fits, const std::string& op) {
  for (const auto& f : fits) {
    if (f.op == op && f.bus_bandwidth > 0) return f.bus_bandwidth;
  }
  return 0.0;
}

}  // namespace

std::vector<CommFit> intra_machine_fits(const std::vector<CommRow>& rows, int ranks_per_machine) {
  return {fit_or_largest(rows, "sendrecv", ranks_per_machine),
          fit_or_largest(rows, "allreduce", ranks_per_machine)};
}

std::string topology_yaml(const TopologyFigures& figures) {
  std::ostringstream out;
  std::istringstream comment(figures.comment);
  for (std::string line; std::getline(comment, line);) out << "# " << line << "\n";
  char values[512];
  std::snprintf(values, sizeof values,
                "name: %s\n"
                "gpu_memory_bytes: %.6g\n"
                "bandwidth:\n"
                "  intra_machine: %.6g\n"
                "  inter_machine_p2p: %.6g\n"
                "  inter_machine_collective: %.6g\n",
                figures.name.c_str(), figures.memory_bytes, figures.intra_machine,
                figures.inter_machine_p2p, figures.inter_machine_collective);
  out << values;
  if (figures.intra_machine_collective > 0) {
    std::snprintf(values, sizeof values, "  intra_machine_collective: %.6g\n",
                  figures.intra_machine_collective);
    out << values;
  }
  out << "machines: [";
  for (size_t i = 0; i < figures.machines.size(); ++i) {
    out << (i ? ", " : "") << figures.machines[i];
  }
  out << "]\n";
  return out.str();
}

TopologyFigures loopback_topology(const std::vector<CommFit>& fits, int world_size,
                                  double memory_bytes, const std::string& name) {
  TopologyFigures figures;
  const double p2p = fitted_bandwidth(fits, "sendrecv");
  const double collective = fitted_bandwidth(fits, "allreduce");
  if (p2p <= 0 || collective <= 0) {
    throw InputError("the send/recv and all-reduce fits need a positive bandwidth for a topology");
  }
  figures.name = name;
  figures.comment =
      "Measured by `harness profile comm`: one machine of " + std::to_string(world_size) +
      " ranks.\n"
      "intra_machine: send/recv bandwidth; intra_ and inter_machine_collective: all-reduce\n"
      "bus bandwidth (no second machine was measured: inter-machine values repeat these).";
  figures.memory_bytes = memory_bytes;
  figures.intra_machine = figures.inter_machine_p2p = p2p;
  figures.intra_machine_collective = figures.inter_machine_collective = collective;
  figures.machines = {world_size};
  return figures;
}

MeasuredLink measured_link(const std::vector<CommFit>& fits, const std::vector<CommRow>& rows,
                           const std::vector<CommFit>& intra_fits) {
  MeasuredLink link;
  link.p2p_bytes_per_s = fitted_bandwidth(fits, "pingpong");
  if (link.p2p_bytes_per_s <= 0) link.p2p_bytes_per_s = fitted_bandwidth(fits, "sendrecv");
  link.allreduce_bus_bytes_per_s = fitted_bandwidth(fits, "allreduce");
  for (const auto& fit : fits) {
    if (fit.op == "allreduce" && fit.cpu_cores > 0)
      link.allreduce_cpu_cores_per_rank = fit.cpu_cores;
  }
  for (const auto& fit : fits) {
    if (fit.op == "allgather") {
      link.allgather_latency_us = std::max(0.0, fit.latency_us);
      link.allgather_bus_bytes_per_s = fit.bus_bandwidth;
    } else if (fit.op == "reducescatter") {
      link.reducescatter_latency_us = std::max(0.0, fit.latency_us);
      link.reducescatter_bus_bytes_per_s = fit.bus_bandwidth;
    }
  }
  for (const auto& fit : intra_fits) {
    if (fit.op == "allreduce" && fit.cpu_cores > 0)
      link.intra_allreduce_cpu_cores_per_rank = fit.cpu_cores;
  }
  const auto smallest = [&rows](const std::string& op) {
    const CommRow* found = nullptr;
    for (const auto& row : rows) {
      if (row.op == op && row.samples > 0 && (!found || row.bytes < found->bytes)) found = &row;
    }
    return found;
  };
  if (const CommRow* row = smallest("pingpong")) link.one_way_latency_us = row->p50_ms * 1e3;
  if (const CommRow* row = smallest("burst")) {
    link.burst_latency_us = row->p50_ms * 1e3;
    link.burst_bytes_per_s = fitted_bandwidth(fits, "burst");
    // Below the bucket's size nothing is shaped, so the host's path is faster than the link: a
    // fit that is not is the noise of the three sizes' tens of microseconds (such a fit has come
    // out at 0.61 of a 100 Mbit/s link), no path resolved, as a falling fit is.
    if (link.p2p_bytes_per_s > 0 && link.burst_bytes_per_s <= link.p2p_bytes_per_s)
      link.burst_bytes_per_s = 0;
  }
  for (const auto& row : rows) {
    if (row.op == "burst" && row.send_call_p50_ms)
      link.send_call_us.emplace_back(row.bytes, *row.send_call_p50_ms * 1e3);
  }
  std::sort(link.send_call_us.begin(), link.send_call_us.end());
  return link;
}

std::optional<double> past_bucket_latency_us(const MeasuredLink& link,
                                             const std::vector<CommRow>& rows,
                                             double bucket_bytes) {
  if (!link.burst_latency_us || !(link.p2p_bytes_per_s > 0)) return std::nullopt;
  const double bucket_us =
      link.burst_bytes_per_s > 0 ? bucket_bytes / link.burst_bytes_per_s * 1e6 : 0.0;
  std::vector<double> past;
  for (const auto& row : rows) {
    if (row.op != "burst" || row.samples == 0 || !(static_cast<double>(row.bytes) > bucket_bytes))
      continue;
    const double model_us =
        *link.burst_latency_us + bucket_us +
        (static_cast<double>(row.bytes) - bucket_bytes) / link.p2p_bytes_per_s * 1e6;
    past.push_back(row.p50_ms * 1e3 - model_us);
  }
  if (past.empty()) return std::nullopt;
  return summarize(past).p50;
}

namespace {

// A measured figure, or null where it was not measured.
nlohmann::json or_null(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

}  // namespace

nlohmann::json to_json(const MeasuredLink& link) {
  return {{"p2p_bits_per_s", link.p2p_bytes_per_s * 8},
          {"allreduce_bus_bits_per_s", link.allreduce_bus_bytes_per_s * 8},
          {"one_way_latency_us", or_null(link.one_way_latency_us)},
          {"allreduce_cpu_cores_per_rank", or_null(link.allreduce_cpu_cores_per_rank)},
          {"burst_latency_us", or_null(link.burst_latency_us)},
          {"burst_bits_per_s", link.burst_bytes_per_s * 8},
          {"send_call_us",
           link.send_call_us.empty() ? nlohmann::json() : nlohmann::json(link.send_call_us)},
          {"past_bucket_latency_us", or_null(link.past_bucket_latency_us)},
          {"allgather_latency_us", or_null(link.allgather_latency_us)},
          {"allgather_bus_bits_per_s", link.allgather_bus_bytes_per_s * 8},
          {"reducescatter_latency_us", or_null(link.reducescatter_latency_us)},
          {"reducescatter_bus_bits_per_s", link.reducescatter_bus_bytes_per_s * 8}};
}

nlohmann::json emulated_link_json(const EmulatedClusterShape& shape, const MeasuredLink& measured) {
  const LinkShape& link = shape.inter_machine;
  return {
      {"machines", shape.machines},
      {"ranks_per_machine", shape.ranks_per_machine},
      {"inter_machine_configured",
       {{"rate_bits_per_s", or_null(link.rate_bits_per_s)},
        {"token_bucket_bytes", link.rate_bits_per_s
                                   ? nlohmann::json(token_bucket_bytes(*link.rate_bits_per_s))
                                   : nlohmann::json()},
        {"delay_s", link.delay_s},
        {"loss_percent", link.loss_percent}}},
      {"inter_machine_measured", to_json(measured)},
      {"intra_machine_measured",
       {{"allreduce_cpu_cores_per_rank", or_null(measured.intra_allreduce_cpu_cores_per_rank)}}}};
}

TopologyFigures emulated_topology(const MeasuredLink& link, const std::vector<CommFit>& intra_fits,
                                  int machines, int ranks_per_machine, double memory_bytes,
                                  const std::string& name) {
  if (link.p2p_bytes_per_s <= 0 || link.allreduce_bus_bytes_per_s <= 0) {
    throw InputError("the send/recv and all-reduce fits need a positive bandwidth for a topology");
  }
  TopologyFigures figures;
  figures.name = name;
  figures.memory_bytes = memory_bytes;
  figures.inter_machine_p2p = link.p2p_bytes_per_s;
  figures.inter_machine_collective = link.allreduce_bus_bytes_per_s;
  figures.machines.assign(static_cast<size_t>(machines), ranks_per_machine);
  figures.comment = "Measured by `harness profile comm` on " + std::to_string(machines) +
                    " emulated machines of " + std::to_string(ranks_per_machine) +
                    " rank(s).\n"
                    "inter_machine_p2p: send/recv between machines; inter_machine_collective:\n"
                    "all-reduce bus bandwidth over every rank; ";
  if (ranks_per_machine > 1) {
    figures.intra_machine = fitted_bandwidth(intra_fits, "sendrecv");
    if (figures.intra_machine <= 0) {
      throw InputError("the intra-machine send/recv fit needs a positive bandwidth");
    }
    figures.intra_machine_collective = fitted_bandwidth(intra_fits, "allreduce");
    figures.comment += figures.intra_machine_collective > 0
                           ? "intra_machine: send/recv within machine 0;\n"
                             "intra_machine_collective: all-reduce bus bandwidth of its ranks."
                           : "intra_machine: send/recv within machine 0.";
  } else {
    figures.intra_machine = link.p2p_bytes_per_s;
    figures.comment += "intra_machine: no two ranks share a machine (the link's value).";
  }
  return figures;
}

}  // namespace harness
