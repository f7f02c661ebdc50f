#include "harness/emulation/machine_entry.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/child_process.h"
#include "common/input_error.h"
#include "common/text_util.h"

namespace harness {
namespace {

[[noreturn]] void give_up(const std::string& what) {
  std::fprintf(stderr, "error: enter-machine: %s: %s\n", what.c_str(), std::strerror(errno));
  std::_Exit(126);
}

void check_no_space(const std::string& word, const std::string& what) {
  if (word.find_first_of(" \t\n") != std::string::npos) {
    throw InputError("cluster.machines under --launcher mpirun: " + what + " '" + word +
                     "' holds a space (Open MPI splits its launch agent on spaces)");
  }
}

}  // namespace

std::vector<std::string> enter_machine_words(const std::string& harness, const NetworkPlan& plan,
                                             const std::string& private_folder) {
  std::vector<std::string> list;
  for (const auto& machine : plan.machines) list.push_back(machine.address + "=" + machine.netns);
  check_no_space(harness, "the harness binary");
  check_no_space(private_folder, "the run's folder");
  std::vector<std::string> words = {harness, "enter-machine", "--machines", join(list, ",")};
  if (!private_folder.empty()) words.insert(words.end(), {"--private", private_folder});
  return words;
}

std::vector<EmulatedMachine> parse_machine_list(const std::string& text) {
  std::vector<EmulatedMachine> machines;
  for (const auto& item : split(text, ',')) {
    const auto equals = item.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == item.size()) {
      throw InputError("--machines: expected ADDRESS=NETNS,..., got '" + item + "'");
    }
    machines.push_back({item.substr(equals + 1), item.substr(0, equals)});
  }
  if (machines.empty()) throw InputError("--machines: no machine given");
  return machines;
}

const EmulatedMachine& find_machine(const MachineEntry& entry, const std::string& host) {
  for (const auto& machine : entry.machines) {
    if (machine.address == host || machine.netns == host) return machine;
  }
  throw InputError("enter-machine: no emulated machine '" + host + "'");
}

void exec_on_machine(const EmulatedMachine& machine, const std::string& private_folder,
                     const std::vector<std::string>& command, bool through_shell) {
  if (command.empty()) {
    errno = EINVAL;
    give_up("no command");
  }
  // `ip netns add` keeps each namespace at /run/netns/NAME.
  const std::string handle = "/run/netns/" + machine.netns;
  const int fd = ::open(handle.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) give_up("entering " + handle);
  ::close(fd);
  if (::unshare(CLONE_NEWNS | CLONE_NEWUTS) != 0) give_up("a mount and UTS namespace");
  if (::sethostname(machine.netns.data(), machine.netns.size()) != 0) give_up("sethostname");
  // Slave propagation: the host's mounts still reach the machine, its own never the host.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0)
    give_up("mount --make-rslave /");
  if (!private_folder.empty()) {
    if (::mount("harness-private", private_folder.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                "mode=0755") != 0) {
      give_up("tmpfs on " + private_folder);
    }
    const std::string temporary = private_folder + "/.machine-tmp";
    std::error_code error;
    std::filesystem::create_directories(temporary, error);
    ::setenv("TMPDIR", temporary.c_str(), 1);
  }
  std::vector<std::string> words = command;
  if (through_shell) words = {"/bin/sh", "-c", join(command, " ")};
  try {
    replace_this_process(words.front(), {words.begin() + 1, words.end()});
  } catch (const std::runtime_error&) {
    give_up("exec " + words.front());
  }
}

}  // namespace harness
