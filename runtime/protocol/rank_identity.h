// Who a rank is (rank, world size, local rank) and where the ranks meet (master address and
// port), from whichever launcher started it: explicit flags, torchrun (RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR, MASTER_PORT), Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
// first host of SLURM_JOB_NODELIST) or Open MPI (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK).
// Torch-free, so the unit tests check it without LibTorch.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace runtime {

// Which environment a rank reads its identity from. `automatic` takes the first of torchrun,
// Slurm, Open MPI whose rank and size variables are both set.
enum class IdentitySource { automatic, flags, torchrun, slurm, openmpi };

// "auto", "flags", "torchrun", "slurm", "openmpi"; throws std::invalid_argument otherwise.
IdentitySource parse_identity_source(const std::string& name);
std::string identity_source_name(IdentitySource source);

// What the command line said; an unset field is taken from the environment.
struct IdentityFlags {
  IdentitySource source = IdentitySource::automatic;
  std::optional<int> rank;
  std::optional<int> world_size;
  std::optional<int> local_rank;
  std::optional<std::string> master_addr;
  std::optional<int> master_port;
};

struct RankIdentity {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;                            // 0: none given (a file rendezvous needs none)
  IdentitySource source = IdentitySource::flags;  // where rank and world size came from
};

// Looks a variable up; nullopt when unset or empty.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvironmentLookup process_environment();

// Flags win over the environment, field by field. Throws std::invalid_argument with a line
// that names the variable or flag when a value is missing, not a number, or out of range
// (rank outside [0, world size)).
RankIdentity resolve_rank_identity(const IdentityFlags& flags, const EnvironmentLookup& env);

// The first host of a Slurm host list: "node[07-09,12],gpu1" -> "node07", "a,b" -> "a".
std::string first_slurm_host(const std::string& nodelist);

// The local IPv4 address this host would use to reach `host` (a UDP socket connected to it,
// no packet sent): the address Gloo should listen on so that peers on other hosts reach it.
// A loopback `host` gives "127.0.0.1". Throws std::runtime_error when `host` cannot be
// resolved or reached.
std::string local_address_towards(const std::string& host);

// The address for Gloo's transport: HARNESS_GLOO_HOST when set, else local_address_towards
// the master.
std::string gloo_interface_host(const RankIdentity& identity, const EnvironmentLookup& env);

}  // namespace runtime
