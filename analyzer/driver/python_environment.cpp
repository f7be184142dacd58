#include "driver/python_environment.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <optional>
#include <poll.h>
#include <set>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/text.h"

extern char **environ;

namespace devlint {
namespace fs = std::filesystem;

namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string_view::npos)
      end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// Lines without their end (\n or \r\n).
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines = split(text, '\n');
  if (!lines.empty() && lines.back().empty())
    lines.pop_back();
  for (std::string_view &line : lines)
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
  return lines;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

constexpr size_t kMaxSmallFileBytes = 64 << 10; // pyvenv.cfg and each .pth file
constexpr size_t kMaxPthFilesPerDirectory = 256;
constexpr size_t kMaxProbeOutputBytes = 1 << 20;
// Printed by the probe between sys.path (without site) and the site-packages directories, whose
// .pth files devlint reads itself.
constexpr const char *kSiteMarker = "#site-packages";

// Run as `python3 -I -S -c PROBE VENV_PREFIX INCLUDE_SYSTEM`. -S keeps site.py from running
// sitecustomize and the .pth files' import lines; the site-packages it would add are computed
// here instead: the user's, the virtual environment's (whose prefix devlint found from
// pyvenv.cfg; the interpreter runs as its real executable, so it does not know it) and the
// installation's, in the order site.py adds them.
constexpr const char *kProbe = R"(import sys
venv, system = sys.argv[1], sys.argv[2] == "1"
for p in sys.path:
    print(p)
print("#site-packages")
try:
    import site, sysconfig
    if not venv or system:
        print(site.getusersitepackages())
    if venv:
        scheme = "venv" if "venv" in sysconfig.get_scheme_names() else "posix_prefix"
        paths = sysconfig.get_paths(scheme, vars={"base": venv, "platbase": venv})
        print(paths["purelib"])
        print(paths["platlib"])
    if not venv or system:
        for p in site.getsitepackages():
            print(p)
except Exception:
    pass
)";

std::string canonical_or_empty(const fs::path &path) {
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);
  return ec ? std::string() : canonical.string();
}

// The checkout, as far as this process can tell: the working directory (where CI and editors
// run devlint), unless it is the home directory or one above it, which hold the user's own
// tools. Empty when there is none to keep out.
std::string checkout_root() {
  std::error_code ec;
  std::string cwd = canonical_or_empty(fs::current_path(ec));
  if (ec || cwd.empty() || cwd == "/")
    return {};
  const char *home = std::getenv("HOME");
  if (home && *home == '/') {
    std::string canonical_home = canonical_or_empty(home);
    if (!canonical_home.empty() && path_is_within(canonical_home, cwd))
      return {};
  }
  return cwd;
}

// A small regular file's text (never a FIFO, a device or something too large), or nothing.
std::optional<std::string> read_small_regular_file(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return std::nullopt;
  struct stat st {};
  std::optional<std::string> text;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<uint64_t>(st.st_size) <= kMaxSmallFileBytes) {
    std::string bytes;
    char buffer[4096];
    ssize_t n = 0;
    while (bytes.size() <= kMaxSmallFileBytes && (n = read(fd, buffer, sizeof buffer)) > 0)
      bytes.append(buffer, static_cast<size_t>(n));
    if (n == 0 && bytes.size() <= kMaxSmallFileBytes)
      text = std::move(bytes);
  }
  close(fd);
  return text;
}

bool is_existing_regular_file(const fs::path &path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// pyvenv.cfg's `include-system-site-packages = true`.
bool includes_system_site_packages(const std::string &pyvenv_cfg) {
  for (std::string_view line : split_lines(pyvenv_cfg)) {
    size_t equals = line.find('=');
    if (equals == std::string_view::npos)
      continue;
    if (trim(line.substr(0, equals)) != "include-system-site-packages")
      continue;
    std::string value(trim(line.substr(equals + 1)));
    std::transform(value.begin(), value.end(), value.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return value == "true";
  }
  return false;
}

struct Interpreter {
  std::string executable;  // the real file, symlinks resolved
  std::string venv_prefix; // the virtual environment it was found in, if any
  bool system_site_packages = true;
  std::vector<std::string> path; // PATH for it: the absolute entries outside the checkout
};

// The interpreter to ask: $DEVLINT_PYTHON when it is an absolute path (the user named it), else
// the first `python3` (or $DEVLINT_PYTHON's bare name) on an absolute PATH entry. Nothing inside
// the checkout runs: an entry there is used only as a virtual environment (`bin/` beside a
// pyvenv.cfg) whose interpreter resolves to a `python*` outside it; its site-packages are read.
std::optional<Interpreter> find_interpreter() {
  std::string checkout = checkout_root();
  auto in_checkout = [&](const std::string &path) {
    return !checkout.empty() && path_is_within(path, checkout);
  };
  Interpreter found;
  std::vector<std::pair<std::string, bool>> entries; // canonical directory, inside the checkout
  const char *path_variable = std::getenv("PATH");
  for (std::string_view entry : split(path_variable ? path_variable : "", ':')) {
    if (entry.empty() || entry.front() != '/')
      continue; // relative entries (and the empty one) name the working directory
    std::string directory = canonical_or_empty(std::string(entry));
    if (directory.empty())
      continue;
    bool inside = in_checkout(directory);
    entries.emplace_back(directory, inside);
    if (!inside)
      found.path.push_back(std::string(entry));
  }
  const char *chosen = std::getenv("DEVLINT_PYTHON");
  std::string name = chosen && *chosen ? chosen : "python3";
  std::vector<std::pair<fs::path, bool>> candidates; // file, trusted as named by the user
  if (name.find('/') != std::string::npos) {
    if (name.front() != '/')
      return std::nullopt; // relative to the working directory: not run
    candidates.emplace_back(name, true);
  } else {
    for (const auto &[directory, inside] : entries)
      candidates.emplace_back(fs::path(directory) / name, !inside);
  }
  for (const auto &[candidate, trusted] : candidates) {
    if (!is_existing_regular_file(candidate))
      continue;
    std::string real = canonical_or_empty(candidate);
    if (real.empty() || access(real.c_str(), X_OK) != 0)
      continue;
    fs::path directory = candidate.parent_path();
    std::string venv;
    for (const fs::path &prefix : {directory, directory.parent_path()})
      if (is_existing_regular_file(prefix / "pyvenv.cfg")) {
        venv = prefix.lexically_normal().string();
        break;
      }
    if (!trusted) {
      // Inside the checkout: only a virtual environment's link to an interpreter outside it.
      if (venv.empty() || in_checkout(real) ||
          !starts_with(fs::path(real).filename().string(), "python"))
        continue;
    } else if (in_checkout(real) && !(chosen && *chosen && name.front() == '/')) {
      continue; // a link on the user's PATH into the checkout
    }
    found.executable = real;
    found.venv_prefix = venv;
    if (!venv.empty()) {
      auto cfg = read_small_regular_file(venv + "/pyvenv.cfg");
      found.system_site_packages = cfg && includes_system_site_packages(*cfg);
    }
    return found;
  }
  return std::nullopt;
}

// The environment the interpreter gets: the caller's, without PYTHON* variables and with PATH
// reduced to the entries that were searched.
std::vector<std::string> probe_environment(const Interpreter &interpreter) {
  std::vector<std::string> out;
  for (char **e = environ; e && *e; ++e) {
    std::string_view variable(*e);
    if (starts_with(variable, "PYTHON") || starts_with(variable, "PATH="))
      continue;
    out.emplace_back(variable);
  }
  std::string path = "PATH=";
  for (size_t i = 0; i < interpreter.path.size(); ++i)
    path += (i ? ":" : "") + interpreter.path[i];
  out.push_back(path);
  return out;
}

// Runs the probe; its standard output, or nothing when it failed or was too slow.
std::optional<std::string> run_probe(const Interpreter &interpreter, int timeout_ms) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0)
    return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The interpreter reads nothing (devlint may be reading stdin) and its errors are not ours; it
  // runs from `/`, so nothing in the working directory (.python-version, a shadowing module)
  // takes part.
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&actions, "/");
  std::string executable = interpreter.executable, code = kProbe;
  std::string venv = interpreter.venv_prefix;
  std::string system = interpreter.system_site_packages ? "1" : "0";
  std::vector<char *> argv{executable.data(),
                           const_cast<char *>("-I"),
                           const_cast<char *>("-S"),
                           const_cast<char *>("-c"),
                           code.data(),
                           venv.data(),
                           system.data(),
                           nullptr};
  std::vector<std::string> environment = probe_environment(interpreter);
  std::vector<char *> envp;
  for (std::string &variable : environment)
    envp.push_back(variable.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, executable.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    return std::nullopt;
  }
  std::string output;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool finished = false;
  while (output.size() < kMaxProbeOutputBytes) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0)
      break;
    pollfd p{pipe_fds[0], POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0)
      break;
    char buffer[4096];
    ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      finished = n == 0;
      break;
    }
    output.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  if (!finished)
    kill(pid, SIGKILL); // too slow or too talkative: go on without it
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!finished || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return std::nullopt;
  return output;
}

bool is_directory(const std::string &path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// A site-packages directory as site.addsitedir adds it: the directory, then what its .pth
// files (sorted by name) add, read here as data.
void add_site_directory(const std::string &directory, std::vector<std::string> &paths,
                        std::set<std::string> &seen) {
  if (!is_directory(directory))
    return;
  if (seen.insert(directory).second)
    paths.push_back(directory);
  std::vector<std::string> pth_files;
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (ends_with(name, ".pth") && name.front() != '.')
      pth_files.push_back(name);
    if (pth_files.size() >= kMaxPthFilesPerDirectory)
      break;
  }
  std::sort(pth_files.begin(), pth_files.end());
  for (const std::string &name : pth_files) {
    auto text = read_small_regular_file(directory + "/" + name);
    if (!text)
      continue;
    for (const std::string &added : pth_file_directories(directory, *text))
      if (is_directory(added) && seen.insert(added).second)
        paths.push_back(added);
  }
}

} // namespace

bool path_is_within(const std::string &path, const std::string &root) {
  if (root.empty() || !starts_with(path, root))
    return false;
  return path.size() == root.size() || root.back() == '/' || path[root.size()] == '/';
}

std::vector<std::string> pth_file_directories(const std::string &site_directory,
                                              std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view line : split_lines(text)) {
    if (starts_with(line, "#") || starts_with(line, "import ") || starts_with(line, "import\t"))
      continue; // a comment, or code site.py would run
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
      line.remove_suffix(1);
    if (trim(line).empty() || line.find('\0') != std::string_view::npos)
      continue;
    out.push_back((fs::path(site_directory) / std::string(line)).lexically_normal().string());
  }
  return out;
}

std::vector<std::string> python_environment_paths(int timeout_ms) {
  std::optional<Interpreter> interpreter = find_interpreter();
  if (!interpreter)
    return {};
  std::optional<std::string> output = run_probe(*interpreter, timeout_ms);
  if (!output)
    return {};
  std::vector<std::string> paths;
  std::set<std::string> seen;
  bool site = false;
  for (std::string_view line : split_lines(*output)) {
    if (line == kSiteMarker) {
      site = true;
      continue;
    }
    // '' (the working directory) and relative entries are not searched; nor zip archives.
    std::string directory(line);
    if (directory.empty() || directory.front() != '/')
      continue;
    if (site)
      add_site_directory(directory, paths, seen);
    else if (is_directory(directory) && seen.insert(directory).second)
      paths.push_back(directory);
  }
  return paths;
}

const std::vector<std::string> &python_environment_paths_once() {
  static std::once_flag asked;
  static std::vector<std::string> paths;
  std::call_once(asked, [] { paths = python_environment_paths(); });
  return paths;
}

} // namespace devlint
