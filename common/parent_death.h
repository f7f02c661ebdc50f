// Children die with their parent: a harness killed with SIGKILL (which no handler sees) must
// leave no rank running. Called in a child between fork and exec: the kernel sends SIGKILL to
// the child when the thread that forked it ends (PR_SET_PDEATHSIG), and a parent that died
// before this call is caught by comparing getppid() with the pid it had.
#pragma once

#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

#include <csignal>

namespace harness {

// `parent`: getpid() of the parent, taken before the fork. Async-signal-safe.
inline void die_with_parent(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(137);
}

// fork(2) with the child already tied to this process by die_with_parent: the child's pid in
// the parent, 0 in the child, -1 (errno set) when fork failed.
inline pid_t fork_dying_with_parent() {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) die_with_parent(parent);
  return pid;
}

}  // namespace harness
