#include "common/ports.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

namespace harness {
namespace {

// One non-blocking connect to `address`, waited on for at most `wait`: whether it was accepted.
bool accepts(const addrinfo& address, std::chrono::milliseconds wait) {
  const int fd = ::socket(address.ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool accepted = ::connect(fd, address.ai_addr, address.ai_addrlen) == 0;
  if (!accepted && errno == EINPROGRESS) {
    pollfd entry{fd, POLLOUT, 0};
    int error = 0;
    socklen_t length = sizeof error;
    accepted = ::poll(&entry, 1, static_cast<int>(wait.count())) == 1 &&
               ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
  }
  ::close(fd);
  return accepted;
}

}  // namespace

int pick_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string error = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("cannot find a free port: " + error);
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

bool port_is_free(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const int yes = 1;
  // As a server would bind it: SO_REUSEADDR, so a port in TIME_WAIT counts as free.
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return bound;
}

bool wait_until_listening(const std::string& host, int port, std::chrono::milliseconds limit) {
  using Clock = std::chrono::steady_clock;
  constexpr std::chrono::milliseconds kRetry(5), kConnectWait(200);
  const Clock::time_point deadline = Clock::now() + limit;
  const std::string service = std::to_string(port);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  while (true) {
    addrinfo* found = nullptr;
    if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &found) == 0) {
      bool accepted = false;
      for (const addrinfo* a = found; a != nullptr && !accepted; a = a->ai_next) {
        accepted = accepts(*a, kConnectWait);
      }
      ::freeaddrinfo(found);
      if (accepted) return true;
    }
    if (Clock::now() + kRetry >= deadline) return false;
    std::this_thread::sleep_for(kRetry);
  }
}

std::string new_rendezvous_key() {
  std::random_device entropy;
  const unsigned long long high = entropy(), low = entropy();
  char text[32];
  std::snprintf(text, sizeof text, "run-%08llx%08llx", high & 0xffffffffULL, low & 0xffffffffULL);
  return text;
}

}  // namespace harness
