#include "config/config_resolver.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "model/paths.h"

namespace devlint {
namespace fs = std::filesystem;

const std::vector<std::string> &default_exclude() {
  static const std::vector<std::string> names = {
      ".bzr",           ".devlint_cache", ".direnv",       ".eggs",
      ".git",           ".git-rewrite",   ".hg",           ".ipynb_checkpoints",
      ".mypy_cache",    ".nox",           ".pants.d",      ".pyenv",
      ".pytest_cache",  ".pytype",        ".ruff_cache",   ".svn",
      ".tox",           ".venv",          ".vscode",       "__pycache__",
      "__pypackages__", "_build",         "buck-out",      "build",
      "dist",           "node_modules",   "site-packages", "venv"};
  return names;
}

ConfigResolver::ConfigResolver(CommandLineSettings command_line, ConfigDiscovery discovery,
                               const std::string &config_path)
    : command_line_(std::move(command_line)), discovery_(discovery) {
  if (discovery_ == ConfigDiscovery::ExplicitFile) {
    std::error_code ec;
    if (!fs::is_regular_file(config_path, ec))
      throw ConfigError(config_path, 0, "", "no such configuration file");
    explicit_config_ = load_config_file(config_path);
    if (!explicit_config_)
      throw ConfigError(config_path, 0, "", "has no [tool.devlint] section");
  }
}

const ConfigFile *ConfigResolver::nearest_config(const std::string &absolute_directory) {
  auto cached = nearest_.find(absolute_directory);
  if (cached != nearest_.end())
    return cached->second;
  const ConfigFile *found = nullptr;
  if (auto own = config_in_directory(absolute_directory, &refused_)) {
    auto &slot = loaded_[absolute_directory];
    slot = std::make_unique<ConfigFile>(std::move(*own));
    found = slot.get();
  } else if (fs::path parent = fs::path(absolute_directory).parent_path();
             parent != fs::path(absolute_directory)) {
    found = nearest_config(parent.string());
  }
  nearest_[absolute_directory] = found;
  return found;
}

std::vector<Diagnostic> ConfigResolver::take_diagnostics() { return std::exchange(refused_, {}); }

const CheckOptions &ConfigResolver::options_for(const std::string &directory) {
  switch (discovery_) {
  case ConfigDiscovery::Isolated:
    return options_from(nullptr);
  case ConfigDiscovery::ExplicitFile:
    return options_from(&*explicit_config_);
  case ConfigDiscovery::WalkUp:
    break;
  }
  fs::path absolute_directory = absolute_path(directory.empty() ? "." : directory);
  if (!absolute_directory.is_absolute()) // the current directory is gone: no config applies
    return options_from(nullptr);
  std::string absolute = absolute_directory.lexically_normal().string();
  if (absolute.size() > 1 && absolute.back() == '/')
    absolute.pop_back();
  return options_from(nearest_config(absolute));
}

const ConfigFile *ConfigResolver::config_for(const std::string &directory) {
  if (discovery_ == ConfigDiscovery::Isolated)
    return nullptr;
  if (discovery_ == ConfigDiscovery::ExplicitFile)
    return &*explicit_config_;
  std::string absolute =
      fs::absolute(directory.empty() ? "." : directory).lexically_normal().string();
  if (absolute.size() > 1 && absolute.back() == '/')
    absolute.pop_back();
  return nearest_config(absolute);
}

const ConfigFile *ConfigResolver::config_for_current_directory() {
  if (discovery_ == ConfigDiscovery::Isolated)
    return nullptr;
  if (discovery_ == ConfigDiscovery::ExplicitFile)
    return &*explicit_config_;
  fs::path here = current_directory();
  return here.empty() ? nullptr : nearest_config(here.lexically_normal().string());
}

const CheckOptions &ConfigResolver::options_from(const ConfigFile *config) {
  auto &slot = options_[config];
  if (slot)
    return *slot;
  slot = std::make_unique<CheckOptions>();
  CheckOptions &o = *slot;
  const CommandLineSettings &cli = command_line_;
  auto append = [](std::vector<std::string> &to, const std::vector<std::string> &from) {
    to.insert(to.end(), from.begin(), from.end());
  };
  std::vector<std::string> config_search_paths;
  if (config) {
    o.base_directory = config->directory;
    o.selection.select = config->select.value_or(std::vector<std::string>{});
    if (config->select && config->extend_select) // with no `select`, every rule is on already
      append(o.selection.select, *config->extend_select);
    o.selection.ignore = config->ignore.value_or(std::vector<std::string>{});
    o.exclude = config->exclude.value_or(default_exclude());
    append(o.exclude, config->extend_exclude);
    o.include = config->include.value_or(std::vector<std::string>{});
    o.per_file_ignores = config->per_file_ignores;
    o.overrides.extra_no_split_modules =
        config->no_split_modules.value_or(std::vector<std::string>{});
    o.overrides.extra_skip_keys = config->skip_keys.value_or(std::vector<std::string>{});
    o.report_unused_suppressions = config->report_unused_suppressions.value_or(false);
    o.overrides.hand_made_maps = config->hand_made_maps.value_or(false);
    o.unfixable = config->unfixable.value_or(std::vector<std::string>{});
    append(o.unfixable, config->extend_unfixable);
    o.fixable = config->fixable.value_or(std::vector<std::string>{});
    if (config->fixable) // with no `fixable`, every rule's fixes are offered already
      append(o.fixable, config->extend_fixable);
    o.unfixable_source = config->path;
    o.respect_gitignore = config->respect_gitignore.value_or(true);
    // Relative to the configuration file, searched after --search-path.
    for (const std::string &p : config->search_path.value_or(std::vector<std::string>{}))
      config_search_paths.push_back(
          (fs::path(config->directory) / p).lexically_normal().generic_string());
    if (config->libtorch)
      o.cpp.libtorch_dir = (fs::path(config->directory) / *config->libtorch).string();
    // The repository names it: it is read only inside the configuration's own directory.
    if (config->compile_database) {
      o.cpp.build_dir = (fs::path(config->directory) / *config->compile_database).string();
      o.cpp.build_dir_confined_to = config->directory;
      o.cpp.build_dir_source = config->path;
    }
  }
  // The command line wins: --select replaces, the others add.
  if (cli.select)
    o.selection.select = *cli.select;
  if (!o.selection.select.empty())
    append(o.selection.select, cli.extend_select);
  append(o.selection.ignore, cli.ignore);
  if (cli.fixable) {
    o.fixable = *cli.fixable;
    o.unfixable_source = "the command line";
  }
  if (!o.fixable.empty())
    append(o.fixable, cli.extend_fixable);
  if (!cli.unfixable.empty()) {
    append(o.unfixable, cli.unfixable);
    o.unfixable_source = "the command line";
  }
  if (cli.respect_gitignore)
    o.respect_gitignore = *cli.respect_gitignore;
  append(o.overrides.extra_no_split_modules, cli.no_split_modules);
  append(o.overrides.extra_skip_keys, cli.skip_keys);
  if (cli.report_unused_suppressions)
    o.report_unused_suppressions = *cli.report_unused_suppressions;
  // Command-line globs are absolute; the config's are relative to its directory.
  auto relative_to_base = [&o](const std::string &pattern) {
    if (pattern.empty() || pattern.front() != '/')
      return pattern;
    fs::path base = fs::absolute(o.base_directory.empty() ? "." : o.base_directory);
    return fs::path(pattern).lexically_relative(base.lexically_normal()).generic_string();
  };
  if (cli.exclude) {
    o.exclude.clear();
    if (config)
      append(o.exclude, config->extend_exclude);
    for (const std::string &p : *cli.exclude)
      o.exclude.push_back(relative_to_base(p));
  }
  for (const std::string &p : cli.extend_exclude)
    o.exclude.push_back(relative_to_base(p));
  for (PerFileIgnore entry : cli.per_file_ignores) {
    entry.pattern = relative_to_base(entry.pattern);
    o.per_file_ignores.push_back(std::move(entry));
  }
  o.force_exclude = cli.force_exclude;
  o.jobs = cli.jobs;
  o.placement = cli.placement;
  // A hand-written map given on the command line splits the model whatever from_pretrained
  // thinks of string maps.
  if (cli.hand_made_maps || !cli.placement.device_map.empty())
    o.overrides.hand_made_maps = true;
  if (!cli.libtorch_dir.empty())
    o.cpp.libtorch_dir = cli.libtorch_dir;
  if (!cli.build_dir.empty()) {
    o.cpp.build_dir = cli.build_dir;
    o.cpp.build_dir_confined_to.clear();
    o.cpp.build_dir_source.clear();
  }
  o.cpp.pch_dir = cli.pch_dir;
  // As a type checker: the command line's paths, the configuration's, then the environment's.
  o.search_python_environment = cli.python_environment;
  const std::vector<std::string> *in_order[] = {&cli.search_paths, &config_search_paths};
  for (const std::vector<std::string> *paths : in_order)
    for (const std::string &p : *paths)
      if (std::find(o.search_paths.begin(), o.search_paths.end(), p) == o.search_paths.end())
        o.search_paths.push_back(p);
  return o;
}

} // namespace devlint
