#include "harness/machine/cpu_wake_latency.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/text_util.h"

namespace harness {
namespace {

std::string why(const std::filesystem::path& device, int error) {
  return device.string() + ": " + std::strerror(error);
}

// A sysfs file's first line; null when it cannot be read.
nlohmann::json first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return nullptr;
  return line;
}

// The same as an integer; null when all of it is not one.
nlohmann::json integer_line(const std::filesystem::path& file) {
  const nlohmann::json line = first_line(file);
  if (line.is_null()) return line;
  const std::optional<double> value = parse_whole_number(line.get<std::string>());
  if (!value || !std::isfinite(*value) || *value != std::floor(*value)) return nullptr;
  return static_cast<long long>(*value);
}

}  // namespace

nlohmann::json cpu_idle_description(const std::filesystem::path& cpu_sysfs) {
  nlohmann::json states = nlohmann::json::array();
  std::vector<std::filesystem::path> folders;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(cpu_sysfs / "cpu0" / "cpuidle", error)) {
    if (entry.path().filename().string().starts_with("state")) folders.push_back(entry.path());
  }
  // state0, state1, ... in the kernel's order (state10 after state9).
  std::sort(folders.begin(), folders.end(), [](const auto& a, const auto& b) {
    const std::string x = a.filename().string(), y = b.filename().string();
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  for (const auto& folder : folders) {
    states.push_back({{"name", first_line(folder / "name")},
                      {"exit_latency_us", integer_line(folder / "latency")}});
  }
  // Newer kernels name the governor in current_governor, older ones only in current_governor_ro.
  nlohmann::json governor = first_line(cpu_sysfs / "cpuidle" / "current_governor");
  if (governor.is_null()) governor = first_line(cpu_sysfs / "cpuidle" / "current_governor_ro");
  return {{"driver", first_line(cpu_sysfs / "cpuidle" / "current_driver")},
          {"governor", governor},
          {"states", states}};
}

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
