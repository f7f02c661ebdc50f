#include "runtime/protocol/rank_identity.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace runtime {
namespace {

struct SourceVariables {
  IdentitySource source;
  const char* rank;
  const char* world_size;
  const char* local_rank;
};

// In the order `automatic` tries them.
constexpr SourceVariables kSources[] = {
    {IdentitySource::torchrun, "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {IdentitySource::slurm, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    {IdentitySource::openmpi, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK"},
};

const SourceVariables& variables_of(IdentitySource source) {
  for (const auto& entry : kSources) {
    if (entry.source == source) return entry;
  }
  throw std::logic_error("no environment variables for this identity source");
}

int parse_int(const std::string& text, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < 0 || value > 1'000'000'000) {
    throw std::invalid_argument(what + ": expected a non-negative integer, got '" + text + "'");
  }
  return static_cast<int>(value);
}

std::optional<int> env_int(const EnvironmentLookup& env, const char* name) {
  const auto text = env(name);
  if (!text) return std::nullopt;
  return parse_int(*text, std::string("environment variable ") + name);
}

}  // namespace

IdentitySource parse_identity_source(const std::string& name) {
  if (name == "auto") return IdentitySource::automatic;
  if (name == "flags") return IdentitySource::flags;
  if (name == "torchrun") return IdentitySource::torchrun;
  if (name == "slurm") return IdentitySource::slurm;
  if (name == "openmpi") return IdentitySource::openmpi;
  throw std::invalid_argument(
      "--rank-from: expected auto, flags, torchrun, slurm or openmpi, got '" + name + "'");
}

std::string identity_source_name(IdentitySource source) {
  switch (source) {
    case IdentitySource::automatic:
      return "auto";
    case IdentitySource::flags:
      return "flags";
    case IdentitySource::torchrun:
      return "torchrun";
    case IdentitySource::slurm:
      return "slurm";
    case IdentitySource::openmpi:
      return "openmpi";
  }
  return "?";
}

EnvironmentLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value || !*value) return std::nullopt;
    return std::string(value);
  };
}

RankIdentity resolve_rank_identity(const IdentityFlags& flags, const EnvironmentLookup& env) {
  RankIdentity identity;
  IdentitySource source = flags.source;
  const bool explicit_flags = flags.rank.has_value() && flags.world_size.has_value();
  if (source == IdentitySource::automatic) {
    source = IdentitySource::flags;
    if (!explicit_flags) {
      for (const auto& entry : kSources) {
        if (env(entry.rank) && env(entry.world_size)) {
          source = entry.source;
          break;
        }
      }
    }
  }
  identity.source = source;

  std::optional<int> rank = flags.rank, world_size = flags.world_size;
  std::optional<int> local_rank = flags.local_rank;
  if (source != IdentitySource::flags) {
    const SourceVariables& names = variables_of(source);
    if (!rank) rank = env_int(env, names.rank);
    if (!world_size) world_size = env_int(env, names.world_size);
    if (!local_rank) local_rank = env_int(env, names.local_rank);
    if (!rank || !world_size) {
      throw std::invalid_argument("rank identity from " + identity_source_name(source) + ": " +
                                  (rank ? names.world_size : names.rank) + " is not set");
    }
  }
  if (!rank || !world_size) {
    throw std::invalid_argument(
        "no rank identity: pass --rank and --world-size, or start the worker under torchrun "
        "(RANK, WORLD_SIZE), Slurm (SLURM_PROCID, SLURM_NTASKS) or Open MPI "
        "(OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE)");
  }
  if (*world_size < 1) throw std::invalid_argument("world size must be >= 1 (got 0)");
  if (*rank >= *world_size) {
    throw std::invalid_argument("rank " + std::to_string(*rank) + " is outside a world of " +
                                std::to_string(*world_size));
  }
  identity.rank = *rank;
  identity.world_size = *world_size;
  // Started by hand with flags only: every rank on this machine, so the local rank is the rank.
  identity.local_rank = local_rank.value_or(source == IdentitySource::flags ? *rank : 0);

  if (flags.master_addr) {
    identity.master_addr = *flags.master_addr;
  } else if (auto addr = env("MASTER_ADDR")) {
    identity.master_addr = *addr;
  } else if (source == IdentitySource::slurm) {
    // Slurm places task 0 on the first node of the step.
    auto nodes = env("SLURM_STEP_NODELIST");
    if (!nodes) nodes = env("SLURM_JOB_NODELIST");
    if (!nodes) {
      throw std::invalid_argument(
          "rank identity from slurm: neither MASTER_ADDR nor SLURM_JOB_NODELIST is set");
    }
    identity.master_addr = first_slurm_host(*nodes);
  }
  if (flags.master_port) {
    identity.master_port = *flags.master_port;
  } else if (auto port = env_int(env, "MASTER_PORT")) {
    identity.master_port = *port;
  }
  if (identity.master_port > 65535) {
    throw std::invalid_argument("master port " + std::to_string(identity.master_port) +
                                " is not a TCP port");
  }
  return identity;
}

std::string first_slurm_host(const std::string& nodelist) {
  // The first entry ends at the first comma outside brackets; within it, every bracket group
  // "[a-b,c]" stands for its first value, zero padding kept.
  std::string host;
  int depth = 0;
  bool group_done = false;
  for (char c : nodelist) {
    if (c == '[') {
      if (depth > 0) throw std::invalid_argument("bad Slurm host list '" + nodelist + "'");
      depth = 1;
      group_done = false;
    } else if (c == ']') {
      if (depth == 0) throw std::invalid_argument("bad Slurm host list '" + nodelist + "'");
      depth = 0;
    } else if (depth > 0) {
      if (c == ',' || c == '-') group_done = true;
      if (!group_done) host += c;
    } else if (c == ',') {
      break;
    } else if (c != ' ') {
      host += c;
    }
  }
  if (depth != 0 || host.empty()) {
    throw std::invalid_argument("bad Slurm host list '" + nodelist + "'");
  }
  return host;
}

std::string local_address_towards(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (const int error = ::getaddrinfo(host.c_str(), "9", &hints, &found); error != 0) {
    throw std::runtime_error("cannot resolve master address '" + host +
                             "': " + gai_strerror(error));
  }
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) {
    ::freeaddrinfo(found);
    throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  }
  // Connecting a UDP socket sends nothing; it only chooses the route and so the source address.
  const int connected = ::connect(fd, found->ai_addr, found->ai_addrlen);
  ::freeaddrinfo(found);
  sockaddr_in local{};
  socklen_t length = sizeof local;
  if (connected != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0) {
    const std::string error = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("no route to master address '" + host + "': " + error);
  }
  ::close(fd);
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof text);
  return text;
}

std::string gloo_interface_host(const RankIdentity& identity, const EnvironmentLookup& env) {
  if (auto host = env("HARNESS_GLOO_HOST")) return *host;
  return local_address_towards(identity.master_addr);
}

}  // namespace runtime
