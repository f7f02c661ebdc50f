// The local launcher with stand-in ranks (/bin/sh scripts): it must notice a rank that dies
// or hangs, stop the others, and name the rank with the tail of its stderr.
#include "harness/launch/local_launcher.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "harness/launch/cluster_launcher.h"
#include "harness/launch/launch_plan.h"
#include "harness/study/run_resume.h"
#include "runtime/protocol/result_frames.h"
#include "tests/test_util.h"

namespace {

using harness::launch_local;
using harness::LaunchLimits;
using harness::RankProcess;
using harness_test::TempDir;

std::vector<RankProcess> shell_ranks(const TempDir& dir, const std::vector<std::string>& scripts) {
  std::vector<RankProcess> ranks;
  for (size_t r = 0; r < scripts.size(); ++r) {
    RankProcess rank;
    rank.arguments = {"-c", scripts[r]};
    rank.environment = {{"RANK", std::to_string(r)}};
    rank.stdout_path = dir.path() / ("rank" + std::to_string(r) + ".stdout");
    rank.stderr_path = dir.path() / ("rank" + std::to_string(r) + ".stderr");
    ranks.push_back(rank);
  }
  return ranks;
}

bool process_alive(const std::string& pid_file) {
  std::ifstream in(pid_file);
  int pid = 0;
  if (!(in >> pid)) return false;
  if (kill(pid, 0) != 0) return false;
  // A killed process whose parent is gone stays a zombie until init reaps it: dead all the same.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, name, state;
  stat >> pid_field >> name >> state;
  return state != "Z";
}

TEST(LocalLauncher, AllRanksSucceed) {
  TempDir dir;
  const auto outcome = launch_local(
      "/bin/sh", shell_ranks(dir, {"echo rank $RANK", "echo rank $RANK"}), LaunchLimits{});
  EXPECT_TRUE(outcome.ok);
  EXPECT_FALSE(outcome.failure.has_value());
  std::ifstream out(dir.path() / "rank1.stdout");
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "rank 1");  // the environment reached the rank
}

TEST(LocalLauncher, CrashedRankIsNamedAndTheOthersAreStopped) {
  TempDir dir;
  const std::string pid_file = (dir.path() / "survivor.pid").string();
  const auto outcome = launch_local(
      "/bin/sh",
      shell_ranks(dir, {"echo $$ > " + pid_file + "; exec sleep 60",
                        "sleep 0.3; echo 'loading shard' >&2; echo 'segfault here' >&2; "
                        "kill -SEGV $$"}),
      LaunchLimits{});
  EXPECT_FALSE(outcome.ok);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->rank, 1);
  EXPECT_EQ(outcome.failure->reason, "killed by signal 11 (Segmentation fault)");
  EXPECT_EQ(outcome.failure->stderr_tail, "loading shard\nsegfault here\n");
  EXPECT_FALSE(process_alive(pid_file)) << "rank 0 was left running";
}

TEST(LocalLauncher, NonZeroExitIsAFailure) {
  TempDir dir;
  const auto outcome =
      launch_local("/bin/sh", shell_ranks(dir, {"exec sleep 60", "echo 'bad config' >&2; exit 3"}),
                   LaunchLimits{});
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->rank, 1);
  EXPECT_EQ(outcome.failure->reason, "exited with code 3");
  EXPECT_EQ(outcome.failure->stderr_tail, "bad config\n");
}

TEST(LocalLauncher, HungRankIsTheOneThatGotLeastFar) {
  TempDir dir;
  LaunchLimits limits;
  limits.stall_timeout_s = 1.0;
  // Rank 0 writes three heartbeats then waits (as if blocked in a collective); rank 1 writes
  // one and hangs.
  const auto outcome = launch_local(
      "/bin/sh",
      shell_ranks(dir, {"echo a; echo b; echo c; exec sleep 60", "echo a; exec sleep 60"}), limits);
  EXPECT_FALSE(outcome.ok);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->rank, 1);
  EXPECT_EQ(outcome.failure->reason.rfind("hung: no progress from any rank for 1 s", 0), 0u)
      << outcome.failure->reason;
  EXPECT_GE(outcome.elapsed_s, 1.0);
  EXPECT_LT(outcome.elapsed_s, 10.0);
}

TEST(LocalLauncher, OverallTimeout) {
  TempDir dir;
  LaunchLimits limits;
  limits.timeout_s = 0.5;
  // Keeps printing, so it never stalls, but runs past the timeout.
  const auto outcome = launch_local(
      "/bin/sh", shell_ranks(dir, {"while true; do echo x; sleep 0.05; done"}), limits);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->reason, "timed out: the run exceeded run.timeout_s = 0.5 s");
}

TEST(LocalLauncher, ARankThatCannotStartFailsWithTheReasonInItsStderr) {
  TempDir dir;
  const auto outcome =
      launch_local("/no/such/rank-program", shell_ranks(dir, {"true", "true"}), LaunchLimits{});
  EXPECT_FALSE(outcome.ok);
  ASSERT_TRUE(outcome.failure.has_value());
  // Both ranks fail the same way at once; the one reaped first is named, and which that is
  // is the scheduler's choice (CI saw rank 1).
  EXPECT_TRUE(outcome.failure->rank == 0 || outcome.failure->rank == 1) << outcome.failure->rank;
  EXPECT_EQ(outcome.failure->reason, "exited with code 127");
  EXPECT_EQ(outcome.failure->stderr_tail,
            "cannot start /no/such/rank-program: No such file or directory\n");
}

TEST(LocalLauncher, APrefixIsFoundOnPathAndTheRanksOwnVariablesWin) {
  TempDir dir;
  // The harness's own RANK is replaced, not shadowed, by the rank's; its other variables reach
  // the rank as they are.
  std::vector<RankProcess> ranks =
      shell_ranks(dir, {"echo $PREFIXED $RANK $HARNESS_TEST_INHERITED; env | grep -c '^RANK='"});
  ranks[0].prefix = {"env", "PREFIXED=by-env"};
  const auto outcome = [&] {
    const harness_test::ScopedEnv rank("RANK", "the-harness");
    const harness_test::ScopedEnv inherited("HARNESS_TEST_INHERITED", "inherited");
    return launch_local("/bin/sh", ranks, LaunchLimits{});
  }();
  EXPECT_TRUE(outcome.ok) << (outcome.failure ? outcome.failure->stderr_tail : "");
  std::ifstream out(dir.path() / "rank0.stdout");
  std::string line, count;
  std::getline(out, line);
  std::getline(out, count);
  EXPECT_EQ(line, "by-env 0 inherited");
  EXPECT_EQ(count, "1");
}

TEST(TailLines, KeepsTheLastLines) {
  TempDir dir;
  const auto file = dir.write("log", "1\n2\n3\n4\n");
  EXPECT_EQ(harness::tail_lines(file, 2), "3\n4\n");
  EXPECT_EQ(harness::tail_lines(dir.path() / "missing", 2), "");
}

TEST(RankHost, ReadFromTheIdentityLine) {
  TempDir dir;
  const auto out = dir.write(
      "rank1.stdout",
      "rank identity: rank=1 world=2 local_rank=1 host=node7 source=openmpi master=a:1 gloo=b\n"
      "iteration 0 start\n");
  EXPECT_EQ(harness::rank_host_from_stdout(out), "node7");
  EXPECT_EQ(harness::rank_host_from_stdout(dir.write("x", "iteration 0 start\n")), "");
  EXPECT_TRUE(
      harness::failed_on_busy_port("harness-rank worker: The server socket has failed to bind to "
                                   "[::]:29500 (errno: 98 - Address "
                                   "already in use)."));
  EXPECT_FALSE(harness::failed_on_busy_port("harness-rank worker: Connection reset by peer"));
}

// ---- launch plans -------------------------------------------------------------------------

harness::WorkerLaunch sample_worker() {
  harness::WorkerLaunch worker;
  worker.executable = "/opt/harness";
  worker.config_json = R"({"seed": 1, "model": {"name": "mlp"}})";
  worker.out_dir = "/r/raw/p000/overlap/rep0";
  worker.world_size = 4;
  worker.threads_per_rank = 2;
  worker.master_addr = "h1";
  worker.master_port = 29500;
  return worker;
}

TEST(LaunchPlan, Hosts) {
  const auto hosts = harness::parse_hosts("h1:8,h2,h3:2");
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].host, "h1");
  EXPECT_EQ(hosts[0].slots, 8);
  EXPECT_EQ(hosts[1].slots, 1);
  EXPECT_EQ(hosts[2].slots, 2);
  EXPECT_TRUE(harness::parse_hosts("").empty());
  EXPECT_EQ(harness::master_address(hosts), "h1");
  EXPECT_EQ(harness::master_address({}), "127.0.0.1");
  for (const char* bad : {"h1:0", "h1:x", ":4", "h1,,h2"}) {
    EXPECT_THROW(harness::parse_hosts(bad), harness::InputError) << bad;
  }
  EXPECT_THROW(harness::parse_launcher("ssh"), harness::InputError);
}

TEST(LaunchPlan, MpirunLine) {
  auto worker = sample_worker();
  worker.forwarded_variables = {"HARNESS_FAULT"};
  const auto commands = harness::plan_launch(harness::LauncherKind::mpirun, worker,
                                             harness::parse_hosts("h1:2,h2:2"), true);
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_EQ(harness::render_command(commands[0]),
            "mpirun --oversubscribe --bind-to none --tag-output --allow-run-as-root -np 4 "
            "--host h1:2,h2:2 -x OMP_NUM_THREADS=2 -x HARNESS_FAULT /opt/harness worker "
            "--rank-from openmpi --config-json '{\"seed\": 1, \"model\": {\"name\": \"mlp\"}}' "
            "--out /r/raw/p000/overlap/rep0 --rendezvous tcp --master-addr h1 --master-port "
            "29500 --emit-results");
  // Not root: no --allow-run-as-root; no hosts: no --host.
  const auto local =
      harness::plan_launch(harness::LauncherKind::mpirun, sample_worker(), {}, false);
  EXPECT_EQ(std::count(local[0].argv.begin(), local[0].argv.end(), "--allow-run-as-root"), 0);
  EXPECT_EQ(std::count(local[0].argv.begin(), local[0].argv.end(), "--host"), 0);
}

// Each attempt's own key in the store goes to every launcher's workers, last.
TEST(LaunchPlan, RendezvousKeyEndsEveryWorkerLine) {
  auto worker = sample_worker();
  worker.rendezvous_key = "run-0123456789abcdef";
  for (const auto kind : {harness::LauncherKind::mpirun, harness::LauncherKind::slurm,
                          harness::LauncherKind::torchrun}) {
    const auto commands =
        harness::plan_launch(kind, worker, harness::parse_hosts("h1:2,h2:2"), false);
    for (const auto& command : commands) {
      ASSERT_GE(command.argv.size(), 3u);
      EXPECT_EQ(command.argv[command.argv.size() - 2], "--rendezvous-key")
          << harness::render_command(command);
      EXPECT_EQ(command.argv.back(), "run-0123456789abcdef");
    }
  }
}

TEST(LaunchPlan, SrunLine) {
  const auto commands = harness::plan_launch(harness::LauncherKind::slurm, sample_worker(),
                                             harness::parse_hosts("gpu1:2,gpu2:2"), false);
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_EQ(harness::render_command(commands[0]),
            "srun --ntasks=4 --cpus-per-task=2 --distribution=block --kill-on-bad-exit=1 --label "
            "--nodes=2 --nodelist=gpu1,gpu2 --export=ALL,OMP_NUM_THREADS=2 /opt/harness worker "
            "--rank-from slurm --config-json '{\"seed\": 1, \"model\": {\"name\": \"mlp\"}}' "
            "--out /r/raw/p000/overlap/rep0 --rendezvous tcp --master-port 29500 "
            "--emit-results");
}

TEST(LaunchPlan, TorchrunOneCommandPerHost) {
  const auto commands = harness::plan_launch(harness::LauncherKind::torchrun, sample_worker(),
                                             harness::parse_hosts("h1:8,h2:8"), false);
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(
      harness::render_command(commands[1]),
      "[on h2] torchrun --nnodes=2 --nproc_per_node=2 --node_rank=1 --master_addr=h1 "
      "--master_port=29500 --max_restarts=0 --tee=3 --no_python /opt/harness worker --rank-from "
      "torchrun --config-json '{\"seed\": 1, \"model\": {\"name\": \"mlp\"}}' --out "
      "/r/raw/p000/overlap/rep0 --rendezvous tcp --emit-results");
  EXPECT_EQ(commands[0].host, "h1");
  const auto here =
      harness::plan_launch(harness::LauncherKind::torchrun, sample_worker(), {}, false);
  ASSERT_EQ(here.size(), 1u);
  EXPECT_EQ(here[0].argv[1], "--nnodes=1");
  EXPECT_EQ(here[0].argv[2], "--nproc_per_node=4");
}

TEST(LaunchPlan, HostsThatCannotHoldTheWorld) {
  auto error = [](harness::LauncherKind kind, const std::string& hosts) {
    try {
      harness::plan_launch(kind, sample_worker(), harness::parse_hosts(hosts), false);
    } catch (const harness::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(harness::LauncherKind::mpirun, "h1:2,h2:1"),
            "--hosts: 3 slot(s) cannot hold run.world_size = 4 ranks");
  EXPECT_EQ(error(harness::LauncherKind::torchrun, "h1:4,h2:4,h3:4"),
            "--launcher torchrun: run.world_size = 4 ranks do not divide evenly over 3 hosts");
  EXPECT_EQ(error(harness::LauncherKind::torchrun, "h1:3,h2:1"),
            "--launcher torchrun: host h2 has 1 slot(s), 2 ranks per host needed");
}

TEST(LaunchPlan, ShellQuoting) {
  EXPECT_EQ(harness::shell_quote("/a/b-c_d.e:f=1,2"), "/a/b-c_d.e:f=1,2");
  EXPECT_EQ(harness::shell_quote(""), "''");
  EXPECT_EQ(harness::shell_quote("a b"), "'a b'");
  EXPECT_EQ(harness::shell_quote("it's"), "'it'\\''s'");
}

// ---- splitting a launcher's merged output -----------------------------------------------

std::string read_all(const std::filesystem::path& path) { return harness::read_file(path); }

TEST(RankOutputSplitter, OpenMpiTagsWithLinesCutBetweenChunks) {
  TempDir dir;
  harness::RankOutputSplitter split(harness::LauncherKind::mpirun, 2, dir.path(), "stdout");
  // As mpirun printed it (see tests/e2e/launchers.sh): a line of rank 0 cut by a chunk of
  // rank 1, and fed in pieces that cut a tag in two.
  const std::string merged =
      "[1,0]<stdout>:hi from 0\n"
      "[1,0]<stdout>:partial[1,1]<stdout>:hi from 1\n"
      "[1,1]<stdout>:partial[1,0]<stdout>: rest\n"
      "[1,1]<stdout>: rest\n"
      "--------\nmpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 "
      "(Killed).\n";
  for (size_t i = 0; i < merged.size(); i += 7) split.feed(merged.substr(i, 7));
  split.finish();
  EXPECT_EQ(read_all(dir.path() / "rank0.stdout"), "hi from 0\npartial rest\n");
  EXPECT_EQ(read_all(dir.path() / "rank1.stdout"), "hi from 1\npartial rest\n");
  EXPECT_EQ(split.lines(0), 2);
  EXPECT_EQ(split.lines(1), 2);
  EXPECT_EQ(split.own_text(),
            "--------\nmpirun noticed that process rank 1 with PID 0 on node vm exited on "
            "signal 9 (Killed).\n");
}

TEST(RankOutputSplitter, OpenMpiStderrTagsGoToTheRanksStderr) {
  TempDir dir;
  harness::RankOutputSplitter split(harness::LauncherKind::mpirun, 2, dir.path(), "stderr");
  split.feed("[1,1]<stderr>:HARNESS_FAULT: injecting crash\n[1,0]<stderr>:other\n");
  split.finish();
  EXPECT_EQ(read_all(dir.path() / "rank1.stderr"), "HARNESS_FAULT: injecting crash\n");
  EXPECT_EQ(read_all(dir.path() / "rank0.stderr"), "other\n");
}

TEST(RankOutputSplitter, SlurmLabels) {
  TempDir dir;
  harness::RankOutputSplitter split(harness::LauncherKind::slurm, 12, dir.path(), "stdout");
  split.feed(" 0: iteration 0 start\n11: iteration 0 start\nsrun: job step 7 done\n 0: tail");
  split.finish();
  EXPECT_EQ(read_all(dir.path() / "rank0.stdout"), "iteration 0 start\ntail\n");
  EXPECT_EQ(read_all(dir.path() / "rank11.stdout"), "iteration 0 start\n");
  EXPECT_EQ(split.own_text(), "srun: job step 7 done\n");
}

// torchrun --tee=3: each agent prefixes its ranks' lines with their local rank; the second
// agent's ranks follow the first's.
TEST(RankOutputSplitter, TorchrunAgentsByLocalRank) {
  TempDir dir;
  using harness::LauncherKind;
  harness::RankOutputSplitter first(LauncherKind::torchrun, 4, dir.path(), "stdout", 0);
  harness::RankOutputSplitter second(LauncherKind::torchrun, 4, dir.path(), "stdout", 2);
  first.feed("[default0]:a\n[default1]:b\n");
  second.feed("[default1]:d\nW1126 04:55:31.183000 26732 torch/distributed/run.py:851] ***\n");
  second.feed("[default0]:c\n");
  first.finish();
  second.finish();
  EXPECT_EQ(read_all(dir.path() / "rank0.stdout"), "a\n");
  EXPECT_EQ(read_all(dir.path() / "rank1.stdout"), "b\n");
  EXPECT_EQ(read_all(dir.path() / "rank2.stdout"), "c\n");
  EXPECT_EQ(read_all(dir.path() / "rank3.stdout"), "d\n");
  EXPECT_EQ(second.lines(3), 1);
  EXPECT_EQ(second.own_text(), "W1126 04:55:31.183000 26732 torch/distributed/run.py:851] ***\n");
}

TEST(LauncherFailure, ParsedFromTheLaunchersOwnWords) {
  using harness::LauncherKind;
  const auto signaled = harness::parse_launcher_failure(
      LauncherKind::mpirun,
      "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).\n",
      harness::ChildExit{137, 0});
  EXPECT_EQ(signaled.rank, 1);
  EXPECT_EQ(signaled.host, "vm");
  EXPECT_EQ(signaled.reason, "killed by signal 9 (Killed)");
  const auto exited = harness::parse_launcher_failure(
      LauncherKind::mpirun,
      "The first process to do so was:\n\n  Process name: [[17680,1],1]\n  Exit code:    3\n",
      harness::ChildExit{3, 0});
  EXPECT_EQ(exited.rank, 1);
  EXPECT_EQ(exited.reason, "exited with code 3");
  const auto slurm = harness::parse_launcher_failure(
      LauncherKind::slurm, "srun: error: gpu2: task 3: Exited with exit code 3\n",
      harness::ChildExit{1, 0});
  EXPECT_EQ(slurm.rank, 3);
  EXPECT_EQ(slurm.host, "gpu2");
  EXPECT_EQ(slurm.reason, "exited with code 3");
  // srun's words when a node goes down under a step (captured from Slurm 22.05 with `scontrol
  // update nodename=n2 state=down`): the node is the cause, the other task's end followed.
  const auto node = harness::parse_launcher_failure(
      LauncherKind::slurm,
      "srun: error: Node failure on n2\n"
      "srun: Job step aborted: Waiting up to 4 seconds for job step to finish.\n"
      "srun: error: n1: task 0: Terminated\n",
      harness::ChildExit{1, 0});
  EXPECT_EQ(node.rank, -1);  // the harness finds it: the rank that said it ran on n2
  EXPECT_EQ(node.host, "n2");
  EXPECT_EQ(node.reason, "its node n2 failed (srun: Node failure)");
  // torchrun 2.11's report (captured from an agent on an emulated machine): the root cause,
  // not the rank it stopped afterwards.
  const auto agent = harness::parse_launcher_failure(
      LauncherKind::torchrun,
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
      "Failures:\n[1]:\n  time      : 2026-11-26_04:59:04\n  host      : harness-11239-m1\n"
      "  rank      : 2 (local_rank: 0)\n  exitcode  : -15 (pid: 11561)\n"
      "Root Cause (first observed failure):\n[0]:\n  time      : 2026-11-26_04:59:04\n"
      "  host      : harness-11239-m1\n  rank      : 3 (local_rank: 1)\n"
      "  exitcode  : 3 (pid: 11563)\n  error_file: <N/A>\n",
      harness::ChildExit{1, 0});
  EXPECT_EQ(agent.rank, 3);
  EXPECT_EQ(agent.host, "harness-11239-m1");
  EXPECT_EQ(agent.reason, "exited with code 3");
  const auto killed = harness::parse_launcher_failure(
      LauncherKind::torchrun,
      "Root Cause (first observed failure):\n[0]:\n  time      : t\n  host      : n1\n"
      "  rank      : 0 (local_rank: 0)\n  exitcode  : -9 (pid: 7)\n",
      harness::ChildExit{1, 0});
  EXPECT_EQ(killed.reason, "killed by signal 9 (Killed)");
  const auto unknown = harness::parse_launcher_failure(LauncherKind::mpirun, "something else\n",
                                                       harness::ChildExit{2, 0});
  EXPECT_EQ(unknown.rank, -1);
  EXPECT_EQ(unknown.reason, "mpirun exited with code 2");
}

// A launch of one stand-in for mpirun: `script` for /bin/sh, printing what mpirun's
// --tag-output would; the run folder is dir/run.
harness::ClusterLaunch shell_launch(const TempDir& dir, const std::string& script, int world_size) {
  harness::ClusterLaunch launch;
  launch.commands.emplace_back().argv = {"/bin/sh", "-c", script};
  launch.world_size = world_size;
  launch.directory = dir.path() / "run";
  return launch;
}

TEST(ClusterLauncher, FramedResultsReachTheRunFolder) {
  TempDir dir;
  const std::string frames = runtime::frame_file("rank0.csv", "iteration,iteration_ms\n0,1.5\n") +
                             runtime::frame_file("rank1.csv", "iteration,iteration_ms\n0,2.5\n");
  dir.write("frames", frames);
  const harness::ClusterLaunch launch =
      shell_launch(dir,
                   "echo '[1,1]<stdout>:iteration 0 start'; sed 's/^/[1,0]<stdout>:/' " +
                       (dir.path() / "frames").string(),
                   2);
  const auto outcome = harness::launch_cluster(launch, LaunchLimits{});
  ASSERT_TRUE(outcome.ok) << (outcome.failure ? outcome.failure->reason : "");
  EXPECT_EQ(read_all(launch.directory / "rank1.csv"), "iteration,iteration_ms\n0,2.5\n");
  EXPECT_EQ(read_all(launch.directory / "rank0.csv"), "iteration,iteration_ms\n0,1.5\n");
  EXPECT_EQ(read_all(launch.directory / "rank1.stdout"), "iteration 0 start\n");
}

TEST(ClusterLauncher, AHungRankStopsTheWholeProcessGroup) {
  TempDir dir;
  const std::string pid_file = (dir.path() / "child.pid").string();
  // A child in the launcher's group that ignores SIGTERM must still be gone afterwards.
  const harness::ClusterLaunch launch =
      shell_launch(dir,
                   "echo '[1,0]<stdout>:a'; echo '[1,0]<stdout>:b'; echo '[1,1]<stdout>:a';"
                   "sh -c 'trap \"\" TERM; echo $$ > " +
                       pid_file + "; while true; do sleep 0.1; done' & wait",
                   2);
  LaunchLimits limits;
  limits.stall_timeout_s = 1.0;
  const auto outcome = harness::launch_cluster(launch, limits);
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->rank, 1);
  EXPECT_EQ(outcome.failure->reason.rfind("hung: no progress from any rank for 1 s", 0), 0u);
  usleep(100'000);
  EXPECT_FALSE(process_alive(pid_file)) << "a process of the launcher's group was left running";
}

TEST(ClusterLauncher, DamagedFramesFailRankZero) {
  TempDir dir;
  const harness::ClusterLaunch launch =
      shell_launch(dir, "echo '[1,0]<stdout>:@harness-file rank0.csv 4 0000000000000000'", 1);
  const auto outcome = harness::launch_cluster(launch, LaunchLimits{});
  ASSERT_TRUE(outcome.failure.has_value());
  EXPECT_EQ(outcome.failure->rank, 0);
  EXPECT_EQ(outcome.failure->reason,
            "its result files did not arrive intact: frame of 'rank0.csv' has no end");
}

// ---- resume ------------------------------------------------------------------------------

TEST(Resume, OnlyRunsWithEveryRanksSamplesAreComplete) {
  TempDir dir;
  const std::string csv =
      "iteration,forward_ms,backward_ms,step_ms,iteration_ms\n"
      "0,1,2,3,6\n1,1,2,3,6\n";
  dir.write("run/status.json", R"({"status": "complete"})");
  dir.write("run/rank0.csv", csv);
  dir.write("run/rank1.csv", csv);
  EXPECT_TRUE(harness::run_has_complete_results(dir.path() / "run", 2, 2));
  EXPECT_FALSE(harness::run_has_complete_results(dir.path() / "run", 2, 3));  // too few rows
  EXPECT_FALSE(harness::run_has_complete_results(dir.path() / "run", 3, 2));  // rank 2 missing
  dir.write("run/rank1.csv", "iteration,forward_ms\n0,x\n");
  EXPECT_FALSE(harness::run_has_complete_results(dir.path() / "run", 2, 2));  // unparseable
  dir.write("failed/status.json", R"({"status": "failed"})");
  dir.write("failed/rank0.csv", csv);
  EXPECT_FALSE(harness::run_has_complete_results(dir.path() / "failed", 1, 2));
  EXPECT_FALSE(harness::run_has_complete_results(dir.path() / "missing", 1, 2));
}

}  // namespace
