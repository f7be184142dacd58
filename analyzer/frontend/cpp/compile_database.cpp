#include "frontend/cpp/compile_database.h"

#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "model/file_access.h"
#include "model/file_input.h"
#include "model/paths.h"

namespace devlint {
namespace fs = std::filesystem;

namespace {

// Whether brackets nest deeper than `limit` (outside strings): checked before parsing.
bool nested_too_deeply(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit)
        return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

// A directory of an installed LibTorch (its include root, or its C++ API's): readable when a
// database names it, wherever it is installed.
bool is_libtorch_include_directory(const fs::path &directory) {
  std::error_code ec;
  for (const char *header : {"torch/torch.h", "ATen/ATen.h"})
    if (fs::is_regular_file(directory / header, ec))
      return true;
  return false;
}

std::string shown_path(const fs::path &path) {
  fs::path here = current_directory();
  std::error_code ec;
  fs::path relative = here.empty() ? fs::path() : fs::relative(path, here, ec);
  if (!ec && !relative.empty() && relative.string().rfind("..", 0) != 0)
    return printable_text(relative.string(), 400);
  return printable_text(path.string(), 400);
}

struct CachedDatabase {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  int64_t modified_ns = 0;
  std::shared_ptr<const CompileDatabase> database;
  std::string problem; // why it cannot be used
};

// Parsed databases by resolved path, reused while the file is unchanged (every translation unit
// of a run, and of a server's session, asks for the same one).
std::mutex database_cache_mutex;
std::map<std::string, CachedDatabase> database_cache;

// The database at `path` (resolved, inside the project), or null with `problem` filled.
std::shared_ptr<const CompileDatabase> load_database(const fs::path &path, std::string &problem) {
  struct stat info {};
  bool identified = ::stat(path.c_str(), &info) == 0;
  int64_t modified_ns =
      identified ? static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec
                 : 0;
  std::lock_guard<std::mutex> lock(database_cache_mutex);
  if (identified) {
    auto cached = database_cache.find(path.string());
    if (cached != database_cache.end() && cached->second.device == info.st_dev &&
        cached->second.inode == info.st_ino && cached->second.size == info.st_size &&
        cached->second.modified_ns == modified_ns) {
      problem = cached->second.problem;
      return cached->second.database;
    }
  }
  CachedDatabase entry;
  std::string why;
  std::optional<std::string> text = read_regular_file(path.string(), kMaxCompileDatabaseBytes, why);
  if (!text) {
    entry.problem = "not read: " + why;
  } else {
    std::string error;
    entry.database = parse_compile_database(*text, path.parent_path().string(), error);
    if (!entry.database)
      entry.problem = "not valid: " + error;
  }
  if (identified && S_ISREG(info.st_mode)) {
    if (database_cache.size() >= 16)
      database_cache.clear();
    entry.device = info.st_dev;
    entry.inode = info.st_ino;
    entry.size = info.st_size;
    entry.modified_ns = modified_ns;
    database_cache[path.string()] = entry;
  }
  problem = entry.problem;
  return entry.database;
}

} // namespace

std::unique_ptr<CompileDatabase> parse_compile_database(std::string_view text,
                                                        const std::string &database_directory,
                                                        std::string &error) {
  if (nested_too_deeply(text, kMaxCompileDatabaseDepth)) {
    error = "nested more than " + std::to_string(kMaxCompileDatabaseDepth) + " levels deep";
    return nullptr;
  }
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error &e) {
    error = "not JSON (at byte " + std::to_string(e.byte) + ")";
    return nullptr;
  }
  if (!json.is_array()) {
    error = "not a JSON array of compile commands";
    return nullptr;
  }
  auto database = std::make_unique<CompileDatabase>();
  for (size_t i = 0; i < json.size(); ++i) {
    const nlohmann::json &entry = json[i];
    auto bad = [&](const std::string &why) {
      error = "entry " + std::to_string(i + 1) + " " + why;
      return nullptr;
    };
    if (!entry.is_object())
      return bad("is not an object");
    auto directory = entry.find("directory");
    auto file = entry.find("file");
    if (directory == entry.end() || !directory->is_string())
      return bad("has no \"directory\" string");
    if (file == entry.end() || !file->is_string())
      return bad("has no \"file\" string");
    CompileCommand command;
    fs::path dir(directory->get<std::string>());
    if (dir.is_relative())
      dir = fs::path(database_directory) / dir;
    command.directory = dir.lexically_normal().string();
    fs::path source(file->get<std::string>());
    if (source.is_relative())
      source = dir / source;
    command.file = source.lexically_normal().string();
    if (auto arguments = entry.find("arguments"); arguments != entry.end()) {
      if (!arguments->is_array())
        return bad("has \"arguments\" that are not an array");
      for (const nlohmann::json &argument : *arguments) {
        if (!argument.is_string())
          return bad("has an argument that is not a string");
        command.arguments.push_back(argument.get<std::string>());
      }
    } else if (auto line = entry.find("command"); line != entry.end() && line->is_string()) {
      command.arguments = split_command_line(line->get<std::string>());
    } else {
      return bad("has neither \"arguments\" nor a \"command\" string");
    }
    database->by_file.emplace(command.file, database->commands.size());
    database->commands.push_back(std::move(command));
  }
  return database;
}

const CompileCommand *find_compile_command(const CompileDatabase &database,
                                           const std::string &file) {
  auto found = database.by_file.find(file);
  return found == database.by_file.end() ? nullptr : &database.commands[found->second];
}

CompileSetup compile_setup_for(const std::string &main_file, const std::string &given_build_dir,
                               const std::vector<std::string> &trusted_roots,
                               const std::string &confined_to, const std::string &configured_in) {
  CompileSetup setup;
  std::string build_dir = given_build_dir;
  if (!build_dir.empty() && !confined_to.empty() &&
      !path_within(resolved_path(build_dir), resolved_path(confined_to))) {
    setup.warnings.push_back("compile-database in " + shown_path(configured_in) +
                             " not used: " + shown_path(resolved_path(build_dir)) +
                             " is outside the configuration's directory (" +
                             shown_path(resolved_path(confined_to)) +
                             "); compile_commands.json is looked for above the file instead");
    build_dir.clear();
  }
  fs::path main = absolute_path(main_file).lexically_normal();
  fs::path main_resolved = resolved_path(main);
  fs::path checkout = checkout_root_of(main_resolved.parent_path());
  std::error_code ec;

  // The database: compile_commands.json in -p's directory, else the nearest one at or above
  // the file, or in the `build/` of such a directory (as clangd looks), looking no higher than
  // its checkout.
  fs::path database, build_resolved, found_at;
  bool walked = false;
  if (!build_dir.empty()) {
    build_resolved = resolved_path(build_dir);
    fs::path candidate = absolute_path(build_dir) / "compile_commands.json";
    if (fs::exists(fs::symlink_status(candidate, ec)))
      database = candidate;
  } else {
    for (fs::path dir = main_resolved.parent_path(); !dir.empty(); dir = dir.parent_path()) {
      for (const fs::path &candidate :
           {dir / "compile_commands.json", dir / "build" / "compile_commands.json"})
        if (fs::exists(fs::symlink_status(candidate, ec))) {
          database = candidate;
          found_at = dir;
          walked = true;
          break;
        }
      if (walked)
        break;
      if (dir == checkout || dir == dir.parent_path())
        break;
    }
  }
  // Without a checkout: the directory of the database found above the file, or the one holding
  // -p's directory and the file, or the file's own directory.
  if (checkout.empty()) {
    if (walked)
      checkout = found_at;
    else if (!build_resolved.empty() && path_within(main_resolved, build_resolved.parent_path()))
      checkout = build_resolved.parent_path();
    else
      checkout = main_resolved.parent_path();
  }
  setup.checkout = checkout.string();
  setup.roots.push_back(setup.checkout);
  if (!build_resolved.empty())
    setup.roots.push_back(build_resolved.string());
  for (const std::string &root : trusted_roots)
    setup.roots.push_back(resolved_path(root).string());
  if (database.empty())
    return setup;

  std::string name = "compile_commands.json (" + shown_path(database) + ")";
  auto warn = [&](const std::string &problem) {
    setup.warnings.push_back(name + " " + problem + "; this file is parsed with the default flags");
  };
  fs::path database_resolved = resolved_path(database);
  if (!path_within(database_resolved, checkout) &&
      !path_within(database_resolved, build_resolved)) {
    warn("not read: a symlink leaving the project (to " + shown_path(database_resolved) + ")");
    return setup;
  }
  std::string problem;
  std::shared_ptr<const CompileDatabase> loaded = load_database(database_resolved, problem);
  if (!loaded) {
    warn(problem);
    return setup;
  }
  const CompileCommand *command = find_compile_command(*loaded, main.string());
  if (!command && main_resolved != main)
    command = find_compile_command(*loaded, main_resolved.string());
  if (!command || command->arguments.empty())
    return setup; // no entry: the defaults, as for a file without a database

  auto readable = [&](const std::string &directory) {
    fs::path resolved = resolved_path(directory);
    for (const std::string &root : setup.roots)
      if (path_within(resolved, root))
        return true;
    if (is_libtorch_include_directory(resolved)) {
      setup.roots.push_back(resolved.string());
      return true;
    }
    return false;
  };
  CompileFlags flags =
      filter_compile_flags(command->arguments, command->directory, command->file, readable);
  setup.from_database = true;
  setup.arguments = std::move(flags.arguments);
  if (std::string described = describe_filtered_flags(flags); !described.empty())
    setup.warnings.push_back(name + ": " + described);
  return setup;
}

} // namespace devlint
