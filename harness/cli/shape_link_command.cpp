#include "harness/cli/shape_link_command.h"

#include <CLI/CLI.hpp>
#include <stdexcept>

#include "common/child_process.h"
#include "common/input_error.h"
#include "common/text_util.h"
#include "harness/emulation/link_quantities.h"
#include "harness/emulation/network_plan.h"

namespace harness {
namespace {

struct ShapeLinkOptions {
  std::string netns, bandwidth, latency, loss;
};

template <typename Parse>
double parsed(const std::string& flag, const std::string& text, Parse parse) {
  try {
    return parse(text);
  } catch (const std::invalid_argument& e) {
    throw InputError("--" + flag + ": " + e.what());
  }
}

void shape_link(const ShapeLinkOptions& options) {
  LinkShape link;
  if (!options.bandwidth.empty()) {
    link.rate_bits_per_s = parsed("bandwidth", options.bandwidth, parse_link_rate);
  }
  if (!options.latency.empty()) link.delay_s = parsed("latency", options.latency, parse_link_delay);
  if (!options.loss.empty()) link.loss_percent = parsed("loss", options.loss, parse_link_loss);
  for (const Command& command : link_shaping_commands(options.netns, link)) {
    const CapturedOutput result =
        run_captured(command.front(), {command.begin() + 1, command.end()});
    if (result.exit_code != 0) {
      throw std::runtime_error("shape-link: '" + join(command, " ") + "' failed (exit " +
                               std::to_string(result.exit_code) + "): " + first_line_said(result));
    }
  }
}

}  // namespace

void add_shape_link_command(CLI::App& app) {
  auto options = std::make_shared<ShapeLinkOptions>();
  auto* command = app.add_subcommand("shape-link", "Shape an emulated machine's link")
                      ->group("");  // internal: scripts/emulated-slurm.sh runs it
  command->add_option("--netns", options->netns, "The machine's network namespace")->required();
  command->add_option("--bandwidth", options->bandwidth, "Rate, as tc writes it (300mbit)");
  command->add_option("--latency", options->latency, "One-way delay (1ms)");
  command->add_option("--loss", options->loss, "Loss (0.1%)");
  command->callback([options] { shape_link(*options); });
}

}  // namespace harness
