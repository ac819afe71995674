#include "common/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace railyard {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0)
      throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close_end(int i) {
    ::close(fd[i]);
    fd[i] = -1;
  }
};

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env, const std::string& input,
                          Stderr stderr_mode, std::chrono::milliseconds limit) {
  if (argv.empty()) throw std::invalid_argument("run_process: no program");
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq && env.count(std::string(*e, static_cast<size_t>(eq - *e)))) continue;
    env_strings.emplace_back(*e);
  }
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  Pipe in, out, err;
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(in.fd[0], 0);
    ::dup2(out.fd[1], 1);
    if (stderr_mode == Stderr::kCapture) ::dup2(err.fd[1], 2);
    if (stderr_mode == Stderr::kMerge) ::dup2(out.fd[1], 2);
    ::execvpe(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);
  {
    // A child that exits without reading all of its stdin (an IPAM plugin answering DEL at once)
    // must not kill us with SIGPIPE: the signal is blocked on this thread while we write (a
    // pipe's SIGPIPE goes to the writing thread), and one that our write raised is taken back.
    sigset_t pipe_only, old, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    sigpending(&pending);
    const bool pending_before = sigismember(&pending, SIGPIPE);
    for (size_t done = 0; done < input.size();) {
      const ssize_t n = ::write(in.fd[1], input.data() + done, input.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // the child stopped reading
      done += static_cast<size_t>(n);
    }
    sigpending(&pending);
    if (!pending_before && sigismember(&pending, SIGPIPE)) {
      const timespec now{};
      ::sigtimedwait(&pipe_only, nullptr, &now);
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  in.close_end(1);

  ProcessResult r;
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  const auto until = std::chrono::steady_clock::now() + limit;
  while (open_fds > 0) {
    int wait_ms = -1;
    if (limit.count() > 0) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        // Its output may be held open by a grandchild too: stop reading as well.
        ::kill(pid, SIGKILL);
        r.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(left.count());
    }
    const int ready = ::poll(fds, 2, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace railyard
