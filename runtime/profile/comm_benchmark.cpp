#include "runtime/profile/comm_benchmark.h"

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/json_file.h"
#include "common/process_clock.h"
#include "runtime/comm/communicator.h"
#include "runtime/protocol/heap_policy.h"
#include "runtime/protocol/sample_log.h"

namespace runtime {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// One measurement: its ops over its sizes, `iterations` timed after `warmup`, its comm-raw.json
// at `out` (written by rank 0).
struct Measurement {
  std::vector<std::string> ops;
  std::vector<int64_t> sizes;
  int iterations = 20, warmup = 5;
  std::string out;
  // Whether its all-reduce iterations alternate with plain c10d's (`reference` in comm-raw.json):
  // `harness profile comm` prints the two side by side; a probe that only fits the link leaves
  // it off, which halves its all-reduce's time.
  bool reference = true;
  // Matrix products each rank computes after the barrier, untimed, before every timed operation
  // (64 x 512 by 512 x 512, fp32): an operation as a training step meets it, right after compute,
  // rather than on ranks that idled into it together.
  int after_compute = 0;
};

struct Args {
  int rank = -1, world_size = 0;
  Rendezvous rendezvous;
  // In order, in one process: the connections are made once (a launch costs about a second).
  std::vector<Measurement> measurements{1};
  // The address Gloo binds on this rank's host: loopback, or in an emulated machine its own
  // address (harness/emulation/network_plan.h).
  std::string gloo_host = "127.0.0.1";
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) items.push_back(item);
  return items;
}

// A flag of the measurement being read; false if `flag` is none.
bool read_measurement_flag(Measurement& m, const std::string& flag, const std::string& value) {
  if (flag == "--ops") {
    m.ops = split_list(value);
  } else if (flag == "--sizes") {
    m.sizes.clear();
    for (auto& s : split_list(value)) m.sizes.push_back(std::stoll(s));
  } else if (flag == "--iterations") {
    m.iterations = std::stoi(value);
  } else if (flag == "--warmup") {
    m.warmup = std::stoi(value);
  } else if (flag == "--out") {
    m.out = value;
  } else if (flag == "--after-compute") {
    m.after_compute = std::stoi(value);
  } else if (flag == "--reference") {
    if (value != "on" && value != "off")
      throw std::invalid_argument("--reference: '" + value + "' is not on or off");
    m.reference = value == "on";
  } else {
    return false;
  }
  return true;
}

Args parse(const std::vector<std::string>& argv) {
  Args a;
  for (size_t i = 0; i < argv.size(); i += 2) {
    const std::string& flag = argv[i];
    if (flag == "--then") {  // the next measurement: the last one's flags, then its own
      Measurement next = a.measurements.back();
      next.out.clear();
      a.measurements.push_back(std::move(next));
      --i;
      continue;
    }
    if (i + 1 >= argv.size()) throw std::invalid_argument("comm-worker: " + flag + ": no value");
    const std::string& value = argv[i + 1];
    if (flag == "--rank")
      a.rank = std::stoi(value);
    else if (flag == "--world-size")
      a.world_size = std::stoi(value);
    else if (flag == "--master-addr")
      a.rendezvous.host = value;
    else if (flag == "--master-port")
      a.rendezvous.port = std::stoi(value);
    else if (flag == "--rendezvous-key")
      a.rendezvous.key = value;
    else if (flag == "--gloo-host")
      a.gloo_host = value;
    else if (!read_measurement_flag(a.measurements.back(), flag, value))
      throw std::invalid_argument("unknown comm-worker option '" + flag + "'");
  }
  const bool each_complete = std::all_of(
      a.measurements.begin(), a.measurements.end(),
      [](const Measurement& m) { return !m.ops.empty() && !m.sizes.empty() && !m.out.empty(); });
  if (a.rank < 0 || a.world_size < 1 || !each_complete) {
    throw std::invalid_argument(
        "comm-worker: --rank, --world-size, and --ops, --sizes, --out for each measurement needed");
  }
  return a;
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Elements (float32) such that the op moves `bytes` in nccl-tests' sense: the buffer for
// allreduce/broadcast/sendrecv/pingpong, the gathered output for allgather, the input for
// reducescatter and alltoall. Rounded to a multiple of world size where the op splits the buffer.
int64_t elements_for(const std::string& op, int64_t bytes, int world) {
  int64_t elements = std::max<int64_t>(1, bytes / 4);
  if (op == "allgather" || op == "reducescatter" || op == "alltoall") {
    elements = std::max<int64_t>(world, elements / world * world);
  }
  return elements;
}

struct OneWay {
  double wall_ms = 0, cpu_ms = 0;
  // The initiator's send call alone, from the call to its return (not the transfer's end): what
  // a rank's thread spends writing a message whose receive is posted. Gloo's TCP pair writes
  // it into the socket on the calling thread, and on an emulated link the kernel's path through
  // the link runs there too. 0 on the other ranks.
  double send_call_ms = 0;
};

// `pingpong`: rank 0 and rank n/2 (on different emulated machines whenever there are two or
// more: ranks fill machines in order) bounce `bytes` back and forth; the result is the one-way
// time, a round trip over two, measured after an untimed trip so that Gloo's rendezvous (a
// receiver announces its receive before the sender's data may leave) is already under way:
// each side posts its next receive before it sends. One pair only, so that nothing shares its
// link; the other ranks time nothing (zeros).
//
// `burst` (idle > 0): before each round trip the initiator waits `idle`, untimed, so that each
// side's link has idled when its message leaves: an emulated link's token bucket (1 ms of its
// rate, at least 8 KiB) is full again, and a message below its size crosses at the host's own
// speed. Only the round trips are timed.
OneWay pingpong_one_way(Communicator& comm, at::Tensor& buffer, at::Tensor& other,
                        std::chrono::milliseconds idle = std::chrono::milliseconds(0)) {
  const int n = comm.world_size(), r = comm.rank(), half = n / 2;
  if (half == 0 || (r != 0 && r != half)) return {};
  const bool initiator = r == 0;
  const int partner = initiator ? half : 0;
  const int round_trips =
      pingpong_round_trips(buffer.numel() * buffer.element_size(), idle.count() > 0);
  constexpr int kTag = 11;
  double wall_ms = 0, cpu_ms = 0, send_call_ms = 0;
  std::unique_ptr<CommWork> receive = comm.recv(other, partner, kTag);
  for (int trip = 0; trip <= round_trips; ++trip) {
    if (initiator && idle.count() > 0) std::this_thread::sleep_for(idle);
    const auto start = Clock::now();
    const double cpu_start = harness::process_cpu_ms();
    if (initiator) {
      const auto call = Clock::now();
      std::unique_ptr<CommWork> sent = comm.send(buffer, partner, kTag);
      if (trip > 0) send_call_ms += ms_since(call);
      sent->wait();
      receive->wait();
      if (trip < round_trips) receive = comm.recv(other, partner, kTag);
    } else {
      receive->wait();
      if (trip < round_trips) receive = comm.recv(other, partner, kTag);
      comm.send(buffer, partner, kTag)->wait();
    }
    // A responder's trip starts when it starts waiting, so with an idle wait it holds the
    // initiator's idle time as well: then only the initiator's clock times the trips (the
    // result is the slowest rank's). Without one the trips follow one another and each rank
    // times them all, as one interval.
    if (trip > 0 && (initiator || idle.count() == 0)) wall_ms += ms_since(start);
    if (trip > 0) cpu_ms += harness::process_cpu_ms() - cpu_start;
  }
  const double one_way = 2.0 * round_trips;
  return {wall_ms / one_way, cpu_ms / one_way, initiator ? send_call_ms / round_trips : 0.0};
}

// `handover`: what a send call costs a pipeline stage that hands its output to a stage that
// computes: rank 0 sends to rank n/2 (one pair, as ping-pong's), whose receive is posted and
// which computes while the message comes (matmuls of a stage's size, at least 4 and one per
// 64 KiB of the message, longer than the write). Gloo's TCP pair writes the message on the
// calling thread, and over loopback the kernel carries it into the receiver's socket there,
// while the receiver's compute and communication threads share the cores: a call to a computing
// receiver takes longer than one to an idle receiver (ping-pong's send_call_ms). The result:
// rank 0's call alone; the other ranks time nothing (zeros).
double hand_over_send_ms(Communicator& comm, at::Tensor& buffer, at::Tensor& other) {
  const int n = comm.world_size(), r = comm.rank(), half = n / 2;
  if (half == 0 || (r != 0 && r != half)) return 0.0;
  constexpr int kTag = 13;
  static const at::Tensor weights = torch::randn({1024, 1024}), input = torch::randn({32, 1024});
  const auto compute = [&](int64_t matmuls) {
    for (int64_t i = 0; i < matmuls; ++i) torch::mm(input, weights);
  };
  if (r == half) {
    std::unique_ptr<CommWork> receive = comm.recv(other, 0, kTag);
    compute(std::max<int64_t>(6, buffer.numel() * 4 / (int64_t{64} << 10)));
    receive->wait();
    return 0.0;
  }
  compute(2);  // the action that made the output, while the receiver posts and computes
  const auto call = Clock::now();
  std::unique_ptr<CommWork> sent = comm.send(buffer, half, kTag);
  const double ms = ms_since(call);
  sent->wait();
  return ms;
}

// The idle wait before a `burst` round trip: an emulated link's bucket (1 ms of its rate, at
// least 8 KiB) refills within it down to ~7 Mbit/s.
constexpr std::chrono::milliseconds kBurstIdle(10);

// Every rank's time of each iteration, gathered after the op's iterations (untimed): `mine` on
// this rank, the result indexed [rank][iteration].
std::vector<std::vector<double>> gather_times(Communicator& comm, const std::vector<double>& mine) {
  const auto n = static_cast<int64_t>(mine.size());
  at::Tensor local =
      torch::from_blob(const_cast<double*>(mine.data()), {n}, torch::kFloat64).clone();
  at::Tensor all = torch::empty({comm.world_size() * n}, torch::kFloat64);
  comm.all_gather(all, local)->wait();
  std::vector<std::vector<double>> by_rank(comm.world_size());
  const double* values = all.data_ptr<double>();
  for (int r = 0; r < comm.world_size(); ++r)
    by_rank[r].assign(values + r * n, values + (r + 1) * n);
  return by_rank;
}

// `count` fp32 products of a 64 x 512 by a 512 x 512 matrix (33.6 MFLOP each): compute a rank
// does before an operation, as a training step's layers do before their collective.
void compute_products(int count) {
  static const at::Tensor weights = torch::randn({512, 512}), input = torch::randn({64, 512});
  for (int i = 0; i < count; ++i) torch::mm(input, weights);
}

// An operation lasts until its last rank is done: the ranks leave the barrier together, and one
// that finishes early (rank 0 at the start of a ring, a root) would otherwise time a collective
// shorter than any training step waits for it. Per iteration, the slowest rank's time.
std::vector<double> slowest_rank(const std::vector<std::vector<double>>& by_rank) {
  std::vector<double> slowest = by_rank.front();
  for (const auto& times : by_rank)
    for (size_t i = 0; i < slowest.size(); ++i) slowest[i] = std::max(slowest[i], times[i]);
  return slowest;
}

// One timed operation, started and finished (the wait included).
void run_op(const std::string& op, Communicator& comm, at::Tensor& buffer, at::Tensor& other) {
  const int n = comm.world_size(), r = comm.rank();
  if (op == "allreduce") {
    comm.all_reduce_sum(buffer)->wait();
  } else if (op == "broadcast") {
    comm.broadcast(buffer, 0)->wait();
  } else if (op == "alltoall") {
    comm.all_to_all(other, buffer, {}, {})->wait();  // buffer: input, other: output
  } else if (op == "allgather") {
    comm.all_gather(buffer, other)->wait();  // buffer: gathered output, other: one chunk
  } else if (op == "reducescatter") {
    comm.reduce_scatter_sum(other, buffer);  // buffer: input, other: one chunk
  } else if (op == "sendrecv") {
    if (n == 1) return;
    auto sent = comm.send(buffer, (r + 1) % n, 7);
    comm.recv(other, (r + n - 1) % n, 7)->wait();
    sent->wait();
  } else if (op == "copy") {
    other.copy_(buffer);
  } else {
    throw std::invalid_argument("unknown op '" + op + "'");
  }
}

// One timed operation of `op` after `after_compute` untimed products: its wall and CPU time, and
// a ping-pong's send calls (a hand-over's call is its time).
OneWay time_op(const std::string& op, Communicator& comm, at::Tensor& buffer, at::Tensor& other,
               int after_compute) {
  compute_products(after_compute);
  if (op == "pingpong" || op == "burst") {
    return pingpong_one_way(comm, buffer, other,
                            op == "burst" ? kBurstIdle : std::chrono::milliseconds(0));
  }
  if (op == kHandOverOp) return {hand_over_send_ms(comm, buffer, other), 0.0, 0.0};
  const double cpu0 = harness::process_cpu_ms();
  const auto t0 = Clock::now();
  run_op(op, comm, buffer, other);
  return {ms_since(t0), harness::process_cpu_ms() - cpu0, 0.0};
}

// Rank 0 writes the measurement's comm-raw.json once every rank is done.
void write_raw(const Measurement& m, Communicator& comm, const json& entries,
               const json& reference) {
  comm.barrier();
  if (comm.rank() != 0) return;
  const json out = {{"world_size", comm.world_size()},
                    {"backend", comm.backend()},
                    {"iterations", m.iterations},
                    {"warmup", m.warmup},
                    {"after_compute", m.after_compute},
                    {"entries", entries},
                    {"reference", reference}};
  write_text_atomic(m.out, harness::json_text(out, 1) + "\n");
}

// The measurement `m`, its all-reduce iterations alternating with the reference group's where it
// asks for them (then `reference_group` is not null); rank 0 writes its comm-raw.json.
void measure(const Measurement& m, Communicator& comm, c10d::ProcessGroupGloo* reference_group) {
  json entries = json::array();
  json reference = json::array();
  for (const auto& op : m.ops) {
    for (int64_t bytes : m.sizes) {
      const int64_t elements = elements_for(op, bytes, comm.world_size());
      at::Tensor buffer = torch::ones({elements});
      at::Tensor other = torch::empty(
          {(op == "allgather" || op == "reducescatter") ? elements / comm.world_size() : elements});
      if (op == "allgather") other.fill_(1);
      const bool with_reference = op == "allreduce" && m.reference;
      std::vector<at::Tensor> reference_tensors{torch::ones({elements})};
      comm.barrier();
      std::vector<double> times, cpu_times, send_call_times, reference_times;
      // Every timed operation starts right after a barrier, so no rank's clock includes
      // waiting for a peer that is still finishing the previous one (at small sizes that skew
      // would dominate what is measured).
      auto timed_op = [&](int i) {
        comm.barrier();
        const OneWay timed = time_op(op, comm, buffer, other, m.after_compute);
        if (i < m.warmup) return;
        times.push_back(timed.wall_ms), cpu_times.push_back(timed.cpu_ms);
        if (op == "pingpong" || op == "burst") send_call_times.push_back(timed.send_call_ms);
      };
      auto timed_reference = [&](int i) {
        comm.barrier();
        const auto t0 = Clock::now();
        reference_group->allreduce(reference_tensors)->wait();
        const double ms = ms_since(t0);
        if (i >= m.warmup) reference_times.push_back(ms);
      };
      for (int i = 0; i < m.warmup + m.iterations; ++i) {
        if (!with_reference) {
          timed_op(i);
        } else if (i % 2 == 0) {  // alternate which goes first: no order bias
          timed_op(i), timed_reference(i);
        } else {
          timed_reference(i), timed_op(i);
        }
      }
      const auto rank_times = gather_times(comm, times);
      json entry = {{"op", op},
                    {"bytes", elements * 4},
                    {"times_ms", slowest_rank(rank_times)},
                    {"rank_times_ms", rank_times},
                    {"cpu_ms", cpu_times}};
      // Rank 0, which writes the file, is the ping-pong's initiator: its own send calls.
      if (!send_call_times.empty()) entry["send_call_ms"] = send_call_times;
      entries.push_back(std::move(entry));
      if (with_reference) {
        const auto reference_rank_times = gather_times(comm, reference_times);
        reference.push_back({{"op", op},
                             {"bytes", elements * 4},
                             {"times_ms", slowest_rank(reference_rank_times)},
                             {"rank_times_ms", reference_rank_times}});
      }
      std::printf("%s %lld done\n", op.c_str(), static_cast<long long>(elements * 4));
      std::fflush(stdout);
    }
  }

  write_raw(m, comm, entries, reference);
}

int run(const Args& a) {
  torch::set_num_threads(1);
  auto store = connect_store(a.rendezvous, a.rank, a.world_size);
  auto comm =
      make_gloo_communicator(store, a.rank, a.world_size, std::chrono::seconds(600), a.gloo_host);
  std::printf("rendezvous done\n");
  std::fflush(stdout);

  // The reference: a ProcessGroupGloo of its own (plain c10d, not this communicator). For
  // all-reduce its iterations alternate with the profiler's, so that both see the same load.
  // Connected only where a measurement asks for it.
  std::unique_ptr<c10d::ProcessGroupGloo> reference_group;
  if (std::any_of(a.measurements.begin(), a.measurements.end(),
                  [](const Measurement& m) { return m.reference; })) {
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>("reference", store);
    auto reference_options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(600));
    reference_options->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForHostname(a.gloo_host));
    reference_group =
        std::make_unique<c10d::ProcessGroupGloo>(prefixed, a.rank, a.world_size, reference_options);
  }
  for (const Measurement& m : a.measurements) measure(m, *comm, reference_group.get());
  return 0;
}

}  // namespace

int comm_benchmark_main(const std::vector<std::string>& args) {
  try {
    apply_heap_policy("retain");  // as the ranks whose collectives the profile prices
    return run(parse(args));
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "harness comm-worker: %s\n", e.what_without_backtrace());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "harness comm-worker: %s\n", e.what());
  }
  return 1;
}

}  // namespace runtime
