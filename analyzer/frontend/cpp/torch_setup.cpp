#include "frontend/cpp/torch_setup.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>

#include <clang/Basic/Version.h>

#include "frontend/cpp/clang_tool_run.h"
#include "model/private_files.h"

namespace devlint::cpp {
namespace fs = std::filesystem;

std::string resource_dir() { return DEVLINT_CLANG_RESOURCE_DIR; }

// LibTorch's include directories: DIR/include and its C++ API under it.
std::vector<std::string> libtorch_includes(const CppSettings &settings) {
  std::vector<std::string> roots;
  // A directory the user named is the only place looked at: no silent fallback.
  if (!settings.libtorch_dir.empty())
    roots = {(fs::path(settings.libtorch_dir) / "include").string(), settings.libtorch_dir};
  else
    roots = {"/usr/include", "/usr/local/include"};
  for (const std::string &root : roots) {
    fs::path api = fs::path(root) / "torch/csrc/api/include";
    std::error_code ec;
    if (fs::exists(api / "torch/torch.h", ec)) {
      std::vector<std::string> out{api.string()};
      if (root != "/usr/include" && root != "/usr/local/include")
        out.push_back(root);
      return out;
    }
  }
  return {};
}

std::vector<std::string> base_arguments(const CppSettings &settings) {
  // No caret diagnostics: Clang then prints no "N errors generated" of its own.
  std::vector<std::string> args{"clang++",
                                "-std=c++17",
                                "-fsyntax-only",
                                "-Wno-everything",
                                "-fno-caret-diagnostics",
                                "-resource-dir=" + resource_dir()};
  for (const std::string &dir : libtorch_includes(settings)) {
    args.push_back("-isystem");
    args.push_back(dir);
  }
  return args;
}

namespace {

std::string hex(size_t v) {
  std::ostringstream out;
  out << std::hex << v;
  return out.str();
}

constexpr const char *kPchHeaderName = "devlint-torch-pch.h";
constexpr const char *kPchHeaderText = "#include <torch/torch.h>\n#include <torch/script.h>\n";

// What a PCH is built from: the flags (without the file), Clang's version and the dates of the
// LibTorch headers the flags find.
std::string pch_path(const CppSettings &settings, const std::vector<std::string> &arguments) {
  if (settings.pch_dir.empty())
    return {};
  std::string key = LLVM_VERSION_STRING;
  for (const std::string &a : arguments)
    key += "\n" + a;
  std::vector<std::string> includes = libtorch_includes(settings);
  for (size_t i = 0; i + 1 < arguments.size(); ++i)
    if (arguments[i] == "-isystem" || arguments[i] == "-I")
      includes.push_back(arguments[i + 1]);
  for (const std::string &dir : includes) {
    std::error_code ec;
    fs::path header = fs::path(dir) / "torch/torch.h";
    if (!fs::exists(header, ec))
      continue;
    auto stamp = fs::last_write_time(header, ec);
    key += "\n" + std::to_string(ec ? 0 : stamp.time_since_epoch().count());
  }
  return (fs::path(settings.pch_dir) / ("torch-" + hex(std::hash<std::string>()(key)) + ".pch"))
      .string();
}

std::mutex pch_mutex; // one writer per process; other processes see only finished files
// The PCHs of this process by path: the error that building one gave (empty: built), so that a
// set of flags that cannot make one is tried once; and how many sets of database flags have one.
std::map<std::string, std::string> pch_outcomes;
size_t database_variants = 0;

// Builds the PCH at `path` (pch_mutex held).
std::string build_pch_locked(const CppSettings &settings, const std::vector<std::string> &arguments,
                             const std::string &path, std::string &error) {
  if (std::string problem = make_private_directory(settings.pch_dir, LinkPolicy::FollowOwn);
      !problem.empty()) {
    error = "not using a precompiled LibTorch header: " + problem;
    return {};
  }
  if (is_own_plain_file(path))
    return path;
  // The header is a real file: the PCH refers to it by path.
  std::string header = (fs::path(settings.pch_dir) / kPchHeaderName).string();
  if (read_plain_file(header, 1 << 12) != std::optional<std::string>(kPchHeaderText)) {
    if (std::string problem = write_file_replacing(header, kPchHeaderText); !problem.empty()) {
      error = "cannot write the precompiled header's source: " + problem;
      return {};
    }
  }
  std::string temporary = make_temporary_file(path);
  if (temporary.empty()) {
    error = "cannot store the precompiled header in " + settings.pch_dir;
    return {};
  }
  std::error_code ec;
  std::vector<std::string> args = arguments;
  args.erase(std::remove(args.begin(), args.end(), "-fsyntax-only"), args.end());
  // Templates the headers use are instantiated once, in the PCH, not in every file.
  args.insert(args.end(),
              {"-fpch-instantiate-templates", "-x", "c++-header", header, "-o", temporary});
  CollectingDiagnostics diags;
  auto tell = [&](PchBuild event) {
    if (settings.on_pch_build)
      settings.on_pch_build(event, path);
  };
  tell(PchBuild::Started);
  bool ok =
      run_tool(args, std::make_unique<clang::GeneratePCHAction>(), {}, diags) == ToolRun::Succeeded;
  if (!ok || !diags.errors.empty() || !is_own_plain_file(temporary)) {
    tell(PchBuild::Failed);
    fs::remove(temporary, ec);
    error = "cannot build the precompiled LibTorch header" +
            (diags.errors.empty() ? std::string() : ": " + diags.errors.front().message);
    return {};
  }
  fs::permissions(temporary, fs::perms::owner_read | fs::perms::owner_write, ec);
  fs::rename(temporary, path, ec);
  tell(ec ? PchBuild::Failed : PchBuild::Finished);
  if (ec) {
    fs::remove(temporary, ec);
    error = "cannot store the precompiled header in " + settings.pch_dir + ": " + ec.message();
    return {};
  }
  return path;
}

} // namespace

// The PCH directory is the user's (driver/cache_location.h): private to them, checked before use.
// Every file is written through a fresh O_EXCL|O_NOFOLLOW name and renamed into place, and only
// plain files of this user are read, so a link planted at any name is replaced, never followed.
std::string build_pch(const CppSettings &settings, const std::vector<std::string> &arguments,
                      std::string &error) {
  std::string path = pch_path(settings, arguments);
  if (path.empty())
    return {};
  std::lock_guard<std::mutex> lock(pch_mutex);
  if (auto known = pch_outcomes.find(path); known != pch_outcomes.end()) {
    error = known->second;
    return error.empty() ? path : std::string();
  }
  // The defaults' PCH is always made; the database's sets of flags, a bounded number of them.
  if (arguments != base_arguments(settings)) {
    if (database_variants >= kMaxPchVariants)
      return {};
    ++database_variants;
  }
  path = build_pch_locked(settings, arguments, path, error);
  pch_outcomes[pch_path(settings, arguments)] = error;
  return path;
}

// What Clang may read besides the checkout: LibTorch's and the system's include directories,
// Clang's own headers and the precompiled header's directory.
std::vector<std::string> trusted_roots(const CppSettings &settings) {
  std::vector<std::string> roots = libtorch_includes(settings);
  for (const char *system : {"/usr/include", "/usr/local/include", "/usr/lib/gcc"})
    roots.push_back(system);
  roots.push_back(resource_dir());
  if (!settings.pch_dir.empty())
    roots.push_back(settings.pch_dir);
  return roots;
}

// The arguments of a file with a compile_commands.json entry: devlint's own, then the flags the
// allow-list kept (compile_flags.h). The database's compiler is never run.
std::vector<std::string> project_include_arguments(const std::string &main_file,
                                                   const std::string &checkout) {
  std::vector<std::string> out;
  fs::path stop = fs::path(checkout).lexically_normal();
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(fs::absolute(main_file), ec).parent_path();
  for (int depth = 0; !dir.empty() && depth < 32; ++depth, dir = dir.parent_path()) {
    if (fs::is_directory(dir / "include", ec))
      out.insert(out.end(), {"-I", (dir / "include").string()});
    if (dir == stop || dir == dir.parent_path() || stop.empty())
      break;
  }
  return out;
}

std::vector<std::string> database_arguments(const CompileSetup &setup) {
  std::vector<std::string> args{"clang++", "-fsyntax-only", "-Wno-everything",
                                "-fno-caret-diagnostics", "-resource-dir=" + resource_dir()};
  args.insert(args.end(), setup.arguments.begin(), setup.arguments.end());
  return args;
}

} // namespace devlint::cpp
