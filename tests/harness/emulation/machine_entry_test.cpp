// Entering an emulated machine (harness/emulation/machine_entry.h): the words the harness hands
// mpirun and its agent, the machine list parsed back, refusals; then (root only) a command run
// on a machine of a real emulated network: its host name, its address, and a private folder
// that starts empty and keeps what is written in it from the host.
#include "harness/emulation/machine_entry.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/input_error.h"
#include "harness/emulation/emulated_network.h"

namespace {

namespace fs = std::filesystem;

harness::NetworkPlan two_machines(int owner) {
  harness::EmulatedClusterShape shape;
  shape.machines = 2;
  return harness::plan_network(shape, owner);
}

TEST(MachineEntry, WordsNameEveryMachineByAddressAndTheirPrivateFolder) {
  const auto words = harness::enter_machine_words("/opt/h/harness", two_machines(42), "/r/raw");
  EXPECT_EQ(words, (std::vector<std::string>{"/opt/h/harness", "enter-machine", "--machines",
                                             "10.99.0.1=harness-42-m0,10.99.0.2=harness-42-m1",
                                             "--private", "/r/raw"}));
  const auto none = harness::enter_machine_words("/opt/h/harness", two_machines(42), "");
  EXPECT_EQ(none.size(), 4u);
}

TEST(MachineEntry, ThePlansMachinesParseBackAndAreFoundByAddressOrName) {
  const auto machines =
      harness::parse_machine_list("10.99.0.1=harness-42-m0,10.99.0.2=harness-42-m1");
  ASSERT_EQ(machines.size(), 2u);
  EXPECT_EQ(machines[1].address, "10.99.0.2");
  EXPECT_EQ(machines[1].netns, "harness-42-m1");
  const harness::MachineEntry entry{machines, ""};
  EXPECT_EQ(harness::find_machine(entry, "10.99.0.2").netns, "harness-42-m1");
  EXPECT_EQ(harness::find_machine(entry, "harness-42-m0").address, "10.99.0.1");
  try {
    harness::find_machine(entry, "10.99.0.3");
    FAIL() << "an unknown host was found";
  } catch (const harness::InputError& e) {
    EXPECT_STREQ(e.what(), "enter-machine: no emulated machine '10.99.0.3'");
  }
}

TEST(MachineEntry, MalformedListsAndPathsWithSpacesAreRefused) {
  for (const char* bad : {"", "10.99.0.1", "=ns", "10.99.0.1=", "a=b,,c=d"}) {
    EXPECT_THROW(harness::parse_machine_list(bad), harness::InputError) << bad;
  }
  // Open MPI splits its agent's command on spaces: such a path could not reach it whole.
  try {
    harness::enter_machine_words("/opt/my harness/harness", two_machines(42), "/r");
    FAIL() << "a path with a space was taken";
  } catch (const harness::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'/opt/my harness/harness' holds a space"),
              std::string::npos)
        << e.what();
  }
}

// Runs `script` on `machine` in a child; returns its output (stdout and stderr).
std::string on_machine(const harness::EmulatedMachine& machine, const std::string& folder,
                       const std::string& script) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    ::close(pipe_fds[0]);
    harness::exec_on_machine(machine, folder, {script}, /*through_shell=*/true);
  }
  ::close(pipe_fds[1]);
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return out;
}

TEST(MachineEntry, ACommandRunsOnItsMachineWithAFolderOfItsOwn) {
  harness::EmulatedClusterShape shape;
  if (const std::string why = harness::emulation_unavailable_reason(shape); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const fs::path folder =
      fs::temp_directory_path() / ("machine-entry-" + std::to_string(::getpid()));
  fs::create_directories(folder);
  std::ofstream(folder / "written-on-the-host") << "host\n";
  {
    harness::EmulatedNetwork network(two_machines(static_cast<int>(::getpid())));
    const auto& machine = network.plan().machines[1];
    const std::string f = folder.string();
    const std::string out =
        on_machine(machine, f,
                   "hostname; ip -o -4 addr show eth0 | awk '{print $4}'; ls -A " + f +
                       "; echo $TMPDIR; "
                       "echo machine > " +
                       f + "/written-on-the-machine");
    EXPECT_EQ(out, machine.netns + "\n10.99.0.2/16\n.machine-tmp\n" + f + "/.machine-tmp\n");
  }
  EXPECT_TRUE(fs::exists(folder / "written-on-the-host"));
  EXPECT_FALSE(fs::exists(folder / "written-on-the-machine"));
  EXPECT_FALSE(fs::exists(folder / ".machine-tmp"));
  fs::remove_all(folder);
}

}  // namespace
