#include "config/config_file.h"

#include <cctype>
#include <filesystem>
#include <toml++/toml.h>

#include "model/did_you_mean.h"
#include "model/file_input.h"
#include "model/paths.h"
#include "rules/rule.h"

namespace devlint {
namespace fs = std::filesystem;

ConfigError::ConfigError(std::string file_, uint32_t line_, std::string key_,
                         const std::string &problem)
    : std::runtime_error(file_ + (line_ ? ":" + std::to_string(line_) : std::string()) + ": " +
                         (key_.empty() ? "" : key_ + ": ") + problem),
      file(std::move(file_)), line(line_), key(std::move(key_)) {}

namespace {

class Reader {
public:
  Reader(std::string path, std::string prefix)
      : path_(std::move(path)), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(const toml::node &node, const std::string &key,
                         const std::string &problem) const {
    throw ConfigError(path_, static_cast<uint32_t>(node.source().begin.line), prefix_ + key,
                      problem);
  }

  bool boolean(const toml::node &node, const std::string &key) const {
    if (auto value = node.value<bool>(); value && node.is_boolean())
      return *value;
    fail(node, key, "expected true or false");
  }

  std::string text(const toml::node &node, const std::string &key) const {
    if (!node.is_string())
      fail(node, key, "expected a string");
    return *node.value<std::string>();
  }

  std::vector<std::string> strings(const toml::node &node, const std::string &key) const {
    const toml::array *array = node.as_array();
    if (!array)
      fail(node, key, "expected a list of strings");
    std::vector<std::string> out;
    for (const toml::node &item : *array) {
      if (!item.is_string())
        fail(item, key, "expected a list of strings");
      out.push_back(*item.value<std::string>());
    }
    return out;
  }

  // Rule selectors must name rules: a typo would otherwise silently select nothing.
  std::vector<std::string> selectors(const toml::node &node, const std::string &key) const {
    std::vector<std::string> codes = strings(node, key);
    const toml::array &array = *node.as_array();
    for (size_t i = 0; i < codes.size(); ++i) {
      std::string resolved = resolve_selector(codes[i]);
      if (resolved.empty())
        fail(*array.get(i), key,
             "unknown rule selector `" + codes[i] + "`" + selector_suggestion(codes[i]));
      codes[i] = resolved; // a rule name selects its code
    }
    return codes;
  }

  ConfigFile read(const toml::table &table, const std::string &path) const {
    ConfigFile config;
    config.path = path;
    config.directory = absolute_path(path).parent_path().lexically_normal().string();
    read_keys(table, config, "");
    // Ruff 0.2+ keeps the lint settings under `lint`: read after the top level, so they win.
    if (const toml::node *lint = table.get("lint")) {
      if (!lint->is_table())
        fail(*lint, "lint", "expected a table of settings");
      read_keys(*lint->as_table(), config, "lint.");
    }
    return config;
  }

private:
  void read_keys(const toml::table &table, ConfigFile &config, const std::string &section) const {
    for (auto &&[key_node, node] : table) {
      std::string key = section + std::string(key_node.str());
      std::string name(key_node.str());
      if (name == "lint" && section.empty())
        continue; // read by read()
      if (name == "select")
        config.select = selectors(node, key);
      else if (name == "ignore")
        config.ignore = selectors(node, key);
      else if (name == "extend-select")
        config.extend_select = selectors(node, key);
      else if (name == "exclude")
        config.exclude = strings(node, key);
      else if (name == "extend-exclude")
        config.extend_exclude = strings(node, key);
      else if (name == "include")
        config.include = strings(node, key);
      else if (name == "no-split-modules")
        config.no_split_modules = strings(node, key);
      else if (name == "skip-keys")
        config.skip_keys = strings(node, key);
      else if (name == "unfixable")
        config.unfixable = selectors(node, key);
      else if (name == "fixable")
        config.fixable = selectors(node, key);
      else if (name == "extend-fixable")
        for (std::string &code : selectors(node, key))
          config.extend_fixable.push_back(std::move(code));
      else if (name == "extend-unfixable")
        for (std::string &code : selectors(node, key))
          config.extend_unfixable.push_back(std::move(code));
      else if (name == "unsafe-fixes")
        config.unsafe_fixes = boolean(node, key);
      else if (name == "docs-url")
        config.docs_url = text(node, key);
      else if (name == "report-unused-suppressions")
        config.report_unused_suppressions = boolean(node, key);
      else if (name == "search-path")
        config.search_path = strings(node, key);
      else if (name == "hand-made-maps")
        config.hand_made_maps = boolean(node, key);
      else if (name == "libtorch") {
        if (!node.is_string())
          fail(node, key, "expected a directory (a string)");
        config.libtorch = *node.value<std::string>();
      } else if (name == "compile-database") {
        if (!node.is_string())
          fail(node, key, "expected a directory holding compile_commands.json (a string)");
        config.compile_database = *node.value<std::string>();
      } else if (name == "per-file-ignores" || name == "extend-per-file-ignores") {
        const toml::table *entries = node.as_table();
        if (!entries)
          fail(node, key, "expected a table of glob = [rule codes]");
        for (auto &&[glob, codes] : *entries)
          config.per_file_ignores.push_back(
              {std::string(glob.str()), selectors(codes, key + "." + std::string(glob.str()))});
      } else if (name == "respect-gitignore") {
        config.respect_gitignore = boolean(node, key);
      } else {
        throw ConfigError(path_, static_cast<uint32_t>(key_node.source().begin.line), prefix_ + key,
                          "unknown key" + did_you_mean(name, known_keys()) +
                              " (see the README's Configuration section)");
      }
    }
  }

  static const std::vector<std::string> &known_keys() {
    static const std::vector<std::string> keys = {"select",
                                                  "ignore",
                                                  "extend-select",
                                                  "exclude",
                                                  "extend-exclude",
                                                  "include",
                                                  "no-split-modules",
                                                  "skip-keys",
                                                  "unfixable",
                                                  "fixable",
                                                  "extend-fixable",
                                                  "extend-unfixable",
                                                  "unsafe-fixes",
                                                  "docs-url",
                                                  "report-unused-suppressions",
                                                  "search-path",
                                                  "hand-made-maps",
                                                  "libtorch",
                                                  "compile-database",
                                                  "per-file-ignores",
                                                  "extend-per-file-ignores",
                                                  "respect-gitignore",
                                                  "lint"};
    return keys;
  }

  std::string path_;
  std::string prefix_; // "tool.devlint." in pyproject.toml
};

// Errors name the file as the user would type it: relative to the current directory when below it.
std::string shown_path(const std::string &path) {
  fs::path here = current_directory();
  fs::path relative = absolute_path(path).lexically_normal().lexically_relative(here);
  if (here.empty() || relative.empty() || relative.string().rfind("..", 0) == 0)
    return path;
  return relative.string();
}

} // namespace

namespace {

// Reads a configuration file without ever blocking (a FIFO named by --config) or reading
// without bound (/dev/zero).
std::string read_config_text(const std::string &given_path, const std::string &path) {
  std::string why;
  std::optional<std::string> text = read_regular_file(given_path, kMaxInputBytes, why);
  if (!text)
    throw ConfigError(path, 0, "", why);
  return std::move(*text);
}

} // namespace

std::optional<ConfigFile> load_config_file(const std::string &given_path) {
  std::string path = shown_path(given_path);
  return load_config_text(read_config_text(given_path, path), given_path, path);
}

std::optional<ConfigFile> load_config_text(std::string_view text_view,
                                           const std::string &given_path,
                                           const std::string &shown) {
  std::string path = shown.empty() ? given_path : shown;
  std::string text(text_view);
  uint32_t deep_line = 0;
  if (deepest_dotted_key(text, deep_line) > kMaxTomlDottedKeyParts)
    throw ConfigError(path, deep_line, "",
                      "a dotted key nested more than " + std::to_string(kMaxTomlDottedKeyParts) +
                          " levels deep");
  toml::table document;
  try {
    document = toml::parse(text, given_path);
  } catch (const toml::parse_error &e) {
    throw ConfigError(path, static_cast<uint32_t>(e.source().begin.line), "",
                      "invalid TOML: " + std::string(e.description()));
  }
  bool pyproject = fs::path(path).filename() == "pyproject.toml";
  if (!pyproject)
    return Reader(path, "").read(document, path);
  const toml::node *section = document.at_path("tool.devlint").node();
  if (!section)
    return std::nullopt;
  if (!section->is_table())
    throw ConfigError(path, static_cast<uint32_t>(section->source().begin.line), "tool.devlint",
                      "expected a table");
  return Reader(path, "tool.devlint.").read(*section->as_table(), path);
}

std::optional<ConfigFile> config_in_directory(const std::string &directory,
                                              std::vector<Diagnostic> *refused) {
  for (const char *name : {".devlint.toml", "devlint.toml", "pyproject.toml"}) {
    fs::path candidate = fs::path(directory) / name;
    std::error_code ec;
    fs::file_status status = fs::status(candidate, ec);
    if (!fs::exists(status))
      continue;
    if (!fs::is_regular_file(status)) {
      // Read, it could block (a FIFO) or never end (a device); skipped silently, the settings
      // the user expects would be missing without a word.
      std::string why;
      if (!read_regular_file(candidate.string(), kMaxInputBytes, why) && refused)
        refused->push_back({Severity::Warning, shown_path(candidate.string()), 0, 0,
                            "configuration file not read: " + why});
      continue;
    }
    if (auto config = load_config_file(candidate.string()))
      return config;
  }
  return std::nullopt;
}

} // namespace devlint
