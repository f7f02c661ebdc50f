// `harness shape-link --netns NS [--bandwidth R] [--latency D] [--loss L]` (internal, not in
// --help): shapes the machine interface of a namespace somebody else made exactly as the
// harness shapes its own emulated machines' links (harness/emulation/network_plan.h), so that
// scripts/emulated-slurm.sh's nodes and `cluster.machines` get the same link. Root.
#pragma once

namespace CLI {
class App;
}

namespace harness {

void add_shape_link_command(CLI::App& app);

}  // namespace harness
