// Ports for rendezvous: one picked free, whether one is free, and wait_until_listening, what a
// rank joining another's store waits on before c10d's TCPStore connects (whose own retry
// sleeps a second after each refusal).
#include "common/ports.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A socket listening on 127.0.0.1:port (0: one the kernel picks) until destroyed.
class Listener {
 public:
  explicit Listener(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    const int yes = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    sockaddr_in address{.sin_family = AF_INET,
                        .sin_port = htons(static_cast<uint16_t>(port)),
                        .sin_addr = {htonl(INADDR_LOOPBACK)},
                        .sin_zero = {}};
    socklen_t length = sizeof address;
    listening_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                 ::listen(fd_, 4) == 0 &&
                 ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0;
    port_ = ntohs(address.sin_port);
  }
  ~Listener() { ::close(fd_); }
  bool listening() const { return listening_; }
  int port() const { return port_; }

 private:
  int fd_;
  bool listening_ = false;
  int port_ = 0;
};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

TEST(FreePort, IsAUsablePortNumber) {
  const int port = harness::pick_free_port();
  EXPECT_GT(port, 0);
  EXPECT_LT(port, 65536);
}

TEST(FreePort, APortHeldByAListenerIsBusy) {
  int port = 0;
  {
    Listener listener(0);
    ASSERT_TRUE(listener.listening());
    port = listener.port();
    EXPECT_FALSE(harness::port_is_free(port));
  }
  EXPECT_TRUE(harness::port_is_free(port));
}

TEST(WaitUntilListening, ReturnsAtOnceWhenSomethingListens) {
  const int port = harness::pick_free_port();
  Listener listener(port);
  ASSERT_TRUE(listener.listening());
  EXPECT_TRUE(harness::wait_until_listening("127.0.0.1", port, milliseconds(5000)));
  EXPECT_TRUE(harness::wait_until_listening("localhost", port, milliseconds(5000)));
}

TEST(WaitUntilListening, ReturnsOnceALateServerListensWellBeforeASecond) {
  const int port = harness::pick_free_port();
  const Clock::time_point start = Clock::now();
  std::thread late([port] {
    std::this_thread::sleep_for(milliseconds(150));
    Listener listener(port);
    std::this_thread::sleep_for(milliseconds(1000));
  });
  const bool listening = harness::wait_until_listening("127.0.0.1", port, milliseconds(10000));
  const double waited = ms_since(start);
  late.join();
  EXPECT_TRUE(listening);
  // Not before the server bound its port; nowhere near TCPStore's own one-second retry after
  // it (the retry is every 5 ms; a loaded machine gets a generous margin).
  EXPECT_GE(waited, 150.0);
  EXPECT_LT(waited, 900.0);
}

TEST(WaitUntilListening, GivesUpAtItsLimitWhenNothingListens) {
  const int port = harness::pick_free_port();
  const Clock::time_point start = Clock::now();
  EXPECT_FALSE(harness::wait_until_listening("127.0.0.1", port, milliseconds(100)));
  const double waited = ms_since(start);
  EXPECT_GE(waited, 90.0);
  EXPECT_LT(waited, 5000.0);
}

}  // namespace
