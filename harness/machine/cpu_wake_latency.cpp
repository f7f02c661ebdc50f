#include "harness/machine/cpu_wake_latency.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace harness {
namespace {

std::string why(const std::filesystem::path& device, int error) {
  return device.string() + ": " + std::strerror(error);
}

}  // namespace

std::string cpu_wake_latency_unavailable(const std::filesystem::path& device) {
  // Opening for writing is the check: the request starts only once a value is written, so an
  // open that is closed again asks nothing of the machine.
  const int fd = ::open(device.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return why(device, errno);
  ::close(fd);
  return {};
}

long long current_cpu_wake_latency_us(const std::filesystem::path& device) {
  const int fd = ::open(device.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(why(device, errno));
  // The kernel answers with the value as a binary 32-bit integer.
  std::int32_t value = 0;
  const ssize_t got = ::read(fd, &value, sizeof value);
  const int error = errno;
  ::close(fd);
  if (got != static_cast<ssize_t>(sizeof value)) {
    throw std::runtime_error(got < 0 ? why(device, error)
                                     : device.string() + ": not a 32-bit latency value");
  }
  return value;
}

CpuWakeLatencyHold::CpuWakeLatencyHold(const std::filesystem::path& device) {
  // O_CLOEXEC: the ranks the harness starts must not inherit the request (nor keep it alive
  // after the harness is gone).
  fd_ = ::open(device.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error(why(device, errno));
  const std::int32_t zero_us = 0;
  if (::write(fd_, &zero_us, sizeof zero_us) != static_cast<ssize_t>(sizeof zero_us)) {
    const int error = errno;
    ::close(std::exchange(fd_, -1));
    throw std::runtime_error(why(device, error));
  }
}

CpuWakeLatencyHold::~CpuWakeLatencyHold() {
  if (fd_ >= 0) ::close(fd_);
}

CpuWakeLatencyHold::CpuWakeLatencyHold(CpuWakeLatencyHold&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

CpuWakeLatencyHold& CpuWakeLatencyHold::operator=(CpuWakeLatencyHold&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

}  // namespace harness
