#include "driver/result_cache.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/cache_location.h"
#include "driver/check_run.h"
#include "driver/model_setup.h"
#include "driver/model_setup_version.h"
#include "driver/source_reading.h"
#include "model/file_input.h"
#include "model/paths.h"
#include "model/private_files.h"
#include "model/utf8.h"

namespace devlint {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What a file a result depends on (config.json, a configuration class) adds to its key: the
// text, or why it was refused; a FIFO or /dev/zero beside the code is never read.
std::string key_text_of(const fs::path &path) {
  std::string why;
  std::optional<std::string> text = read_regular_file(path.string(), kMaxInputBytes, why);
  return text ? "read:" + *text : "refused:" + why;
}

uint64_t rotate(uint64_t x, int bits) { return (x << bits) | (x >> (64 - bits)); }

// MurmurHash3's finalizer: every input bit affects every output bit.
uint64_t avalanche(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// Which devlint binary wrote an entry: its version and, so that a rebuilt binary with the same
// version number (the built-in summaries, the analysis) never reuses results, its size and mtime.
std::string build_identity() {
  std::string identity = DEVLINT_VERSION;
  struct stat info;
  if (stat("/proc/self/exe", &info) == 0)
    identity += "+" + std::to_string(info.st_size) + "." + std::to_string(info.st_mtim.tv_sec) +
                "." + std::to_string(info.st_mtim.tv_nsec);
  return identity;
}

// An entry larger than this, or nested deeper, is not one devlint wrote: a miss.
constexpr uint64_t kMaxEntryBytes = 256ull << 20;
constexpr int kMaxEntryDepth = 10;

// What CACHEDIR.TAG holds (https://bford.info/cachedir/): backup tools skip the directory.
constexpr const char *kCacheDirTag = "Signature: 8a477f597d28d172789f06886806bc55\n"
                                     "# This file is a cache directory tag created by devlint.\n";

// A string as stored: itself when it is UTF-8 (JSON can carry nothing else), else its bytes as
// hex ({"hex": "ff00"}), so a file name that is not UTF-8 round-trips exactly.
json text_json(const std::string &text) {
  if (valid_utf8(text))
    return text;
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : text) {
    hex += digits[c >> 4];
    hex += digits[c & 0xF];
  }
  return {{"hex", hex}};
}

// Throws (a miss) on anything text_json does not write.
std::string text_from(const json &j) {
  if (j.is_string())
    return j.get<std::string>();
  const std::string &hex = j.at("hex").get_ref<const std::string &>();
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    throw std::invalid_argument("not hex");
  };
  if (hex.size() % 2)
    throw std::invalid_argument("odd hex");
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2)
    out += static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1]));
  return out;
}

json range_json(const SourceRange &r) {
  return {r.begin, r.end, r.line, r.column, r.end_line, r.end_column};
}

// Throws unless `j` is an integer from 0 to 2^32-1.
uint32_t position_from(const json &j) {
  json::number_unsigned_t value = j.get_ref<const json::number_unsigned_t &>();
  if (value > UINT32_MAX)
    throw std::out_of_range("position");
  return static_cast<uint32_t>(value);
}

// Throws unless `j` names a Severity.
Severity severity_from(const json &j) {
  uint32_t value = position_from(j);
  if (value > static_cast<uint32_t>(Severity::InvalidSyntax))
    throw std::out_of_range("severity");
  return static_cast<Severity>(value);
}

SourceRange range_from(const json &j) {
  if (!j.is_array() || j.size() != 6)
    throw std::invalid_argument("range");
  SourceRange r;
  r.begin = position_from(j.at(0));
  r.end = position_from(j.at(1));
  r.line = position_from(j.at(2));
  r.column = position_from(j.at(3));
  r.end_line = position_from(j.at(4));
  r.end_column = position_from(j.at(5));
  return r;
}

// Whether `r` lies in `file`: its offsets in the text, its lines and columns on the file's lines
// (the renderers print those lines and pad to those columns).
bool range_fits(const SourceRange &r, const SourceFile &file) {
  if (r.begin > r.end || r.end > file.text.size() || r.end_line < r.line)
    return false;
  auto fits = [&file](uint32_t line, uint32_t column) {
    return line >= 1 && line <= file.line_count() && column >= 1 &&
           column <= file.line_text(line).size() + 1;
  };
  return fits(r.line, r.column) && fits(r.end_line, r.end_column);
}

void add_strings(CacheKeyBuilder &key, const std::vector<std::string> &values) {
  key.add(values.size());
  for (const std::string &v : values)
    key.add(v);
}

// Settings that change what a package or a translation unit reports. A setting added to
// CheckOptions that changes findings must be added here too.
void add_settings(CacheKeyBuilder &key, const CheckOptions &options) {
  const RuleSelection &selection = options.selection;
  add_strings(key, selection.select);
  add_strings(key, selection.ignore);
  add_strings(key, options.overrides.extra_no_split_modules);
  add_strings(key, options.overrides.extra_skip_keys);
  key.add(options.overrides.hand_made_maps ? 1 : 0);
  key.add(options.per_file_ignores.size());
  for (const PerFileIgnore &entry : options.per_file_ignores) {
    key.add(entry.pattern);
    add_strings(key, entry.codes);
  }
  key.add(options.base_directory);
  key.add(options.report_unused_suppressions ? 1 : 0);
  add_strings(key, options.unfixable);
  add_strings(key, options.fixable);
  key.add(options.unfixable_source);
  const PlacementSettings &placement = options.placement;
  key.add(placement.enabled ? 1 : 0)
      .add(static_cast<uint64_t>(placement.gpus))
      .add(placement.max_memory);
  key.add(placement.device_map).add(placement.model_config).add(placement.dtype);
  for (const std::string &input :
       {placement.device_map.substr(0, placement.device_map.find(".py:") == std::string::npos
                                           ? std::string::npos
                                           : placement.device_map.find(".py:") + 3),
        placement.model_config}) {
    key.add(input.empty() ? std::string() : key_text_of(input));
  }
  // Where absolute imports are looked for.
  add_strings(key, options.search_paths);
  key.add(options.search_python_environment ? 1 : 0); // the files found there are in the key
  // The transformers release on the search paths places the model (its METADATA's version). The
  // Python environment is not asked for the key: it is asked only when a run needs it.
  key.add(find_transformers_version(options.search_paths).version);
}

} // namespace

void CacheKeyBuilder::mix(uint64_t word) {
  low_ = rotate(low_ ^ (word * 0x87c37b91114253d5ull), 31) * 0x4cf5ad432745937full;
  high_ = rotate(high_ + (word ^ low_), 27) * 0x52dce729ull + 0x38495ab5ull;
}

CacheKeyBuilder &CacheKeyBuilder::add(uint64_t value) {
  mix(value);
  length_ += 8;
  return *this;
}

CacheKeyBuilder &CacheKeyBuilder::add(std::string_view field) {
  mix(field.size()); // the length prefix keeps ("ab","c") apart from ("a","bc")
  size_t i = 0;
  for (; i + 8 <= field.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, field.data() + i, 8);
    mix(word);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, field.data() + i, field.size() - i);
  mix(tail ^ (uint64_t(field.size() - i) << 56));
  length_ += field.size() + 8;
  return *this;
}

std::string CacheKeyBuilder::hex() const {
  uint64_t a = avalanche(low_ ^ length_), b = avalanche(high_ + a);
  a = avalanche(a ^ b);
  static const char digits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[15 - i] = digits[(a >> (4 * i)) & 0xF];
    out[31 - i] = digits[(b >> (4 * i)) & 0xF];
  }
  return out;
}

ResultCache::ResultCache(std::string entries, std::string scope)
    : entries_(std::move(entries)), build_identity_(build_identity()), scope_(std::move(scope)) {}

std::unique_ptr<ResultCache>
ResultCache::open(const std::string &root, const std::string &project_root, std::string &problem) {
  if (root.empty() || project_root.empty()) {
    problem = root.empty() ? "no cache directory: HOME and XDG_CACHE_HOME are not set"
                           : "the current directory is unknown";
    return nullptr;
  }
  std::string project = project_cache_directory(root, project_root);
  std::string entries = (fs::path(project) / DEVLINT_VERSION).string();
  // Each level is checked, from the root down: a folder below a private one that someone else
  // could still have made (the root was not private before) is caught too.
  for (const std::string &directory :
       {root, (fs::path(root) / "results").string(), project, entries}) {
    problem = make_private_directory(directory, directory == root ? LinkPolicy::FollowOwn
                                                                  : LinkPolicy::Refuse);
    if (!problem.empty())
      return nullptr;
  }
  // As Ruff's cache: marked for backup tools; the project's path, for people looking.
  std::string tag = (fs::path(root) / "CACHEDIR.TAG").string();
  if (!is_own_plain_file(tag))
    write_file_replacing(tag, kCacheDirTag);
  std::string name = (fs::path(project) / "PROJECT").string();
  if (!is_own_plain_file(name))
    write_file_replacing(name, project_root + "\n");
  std::string scope = project_root + "\n" + current_directory().string();
  return std::unique_ptr<ResultCache>(new ResultCache(entries, scope));
}

std::optional<json> ResultCache::read_entry(const std::string &key) const {
  std::optional<std::string> text =
      read_plain_file((fs::path(entries_) / (key + ".json")).string(), kMaxEntryBytes);
  if (!text)
    return std::nullopt;
  json::parser_callback_t shallow = [](int depth, json::parse_event_t, json &) {
    if (depth > kMaxEntryDepth)
      throw std::length_error("nested too deep");
    return true;
  };
  try {
    json entry = json::parse(*text, shallow);
    if (!entry.is_object() || entry.value("key", json()) != key)
      return std::nullopt;
    return entry;
  } catch (const std::exception &) { // truncated, corrupt, or written by something else
    return std::nullopt;
  }
}

std::string
ResultCache::package_key(const std::vector<const SourceFile *> &reported,
                         const std::vector<const SourceFile *> &context,
                         const CheckOptions &options,
                         const std::vector<std::pair<std::string, std::string>> &outside) const {
  CacheKeyBuilder key;
  key.add("devlint-result-cache/4").add(build_identity_).add(scope_);
  // What the package's absolute imports read on the search paths.
  key.add(outside.size());
  for (const auto &[path, text] : outside)
    key.add(path).add(text);
  add_settings(key, options);
  // The files, by path (per-file-ignores match it, reports print it) and content.
  for (const auto *files : {&reported, &context}) {
    key.add(files->size());
    for (const SourceFile *file : *files)
      key.add(file->path).add(file->display_path).add(file->text);
  }
  // What the directory could add on another run: a Python file that a relative import names
  // (only existing ones are read), and the model's config.
  std::string directory =
      reported.empty() ? std::string() : fs::path(reported.front()->path).parent_path().string();
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(directory.empty() ? "." : directory, ec), end; !ec && it != end;
       it.increment(ec))
    if (it->path().extension() == ".py")
      names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  add_strings(key, names);
  // The files the model's configuration is read from (model_setup reads the same list): the
  // configuration class decides parameter shapes.
  ModelInputPaths model_inputs = model_input_paths(directory, "");
  for (const std::string &path : model_inputs.configuration_files)
    key.add(key_text_of(path));
  key.add(key_text_of(model_inputs.config_json));
  for (const std::string &path : source_tree_inputs(directory))
    key.add(path).add(key_text_of(path));
  return key.hex();
}

namespace {

// A rule code as rules write them (DL001): anything else is not an entry devlint wrote.
bool plausible_code(const std::string &code) {
  return !code.empty() && code.size() <= 16 &&
         std::all_of(code.begin(), code.end(), [](char c) { return std::isalnum(c) || c == '-'; });
}

// The findings of an entry, each keyed to one of `reported` by index; nullopt when anything does
// not fit the files (a corrupt entry is a miss). Throws on a field of the wrong type (a miss too).
std::optional<std::vector<Finding>> findings_from(const json &array,
                                                  const std::vector<const SourceFile *> &reported) {
  std::vector<Finding> findings;
  for (const json &j : array) {
    Finding f;
    json::number_unsigned_t file = j.at("file").get_ref<const json::number_unsigned_t &>();
    if (file >= reported.size())
      return std::nullopt;
    f.file = reported[file];
    f.code = text_from(j.at("code"));
    f.rule_name = text_from(j.at("rule"));
    if (!plausible_code(f.code))
      return std::nullopt;
    f.message = text_from(j.at("message"));
    f.summary = text_from(j.at("summary"));
    f.range = range_from(j.at("range"));
    if (!range_fits(f.range, *f.file))
      return std::nullopt;
    for (const json &o : j.at("origins"))
      f.origins.push_back(
          {text_from(o.at("path")), range_from(o.at("range")), text_from(o.at("message"))});
    f.why = text_from(j.at("why"));
    f.no_fix_reason = text_from(j.at("no_fix_reason"));
    f.level = j.at("warning").get<bool>() ? FindingLevel::Warning : FindingLevel::Error;
    f.placement = text_from(j.at("placement"));
    if (const json &fix = j.at("fix"); !fix.is_null()) {
      Fix x;
      json::number_unsigned_t applicability =
          fix.at("applicability").get_ref<const json::number_unsigned_t &>();
      if (applicability > 2)
        return std::nullopt;
      x.applicability = static_cast<Applicability>(applicability);
      x.title = text_from(fix.at("title"));
      for (const json &e : fix.at("edits")) {
        if (!e.is_array() || e.size() != 3)
          return std::nullopt;
        TextEdit edit{position_from(e.at(0)), position_from(e.at(1)), text_from(e.at(2))};
        if (edit.end > f.file->text.size() || edit.begin > edit.end)
          return std::nullopt;
        x.edits.push_back(std::move(edit));
      }
      f.fix = std::move(x);
    }
    findings.push_back(std::move(f));
  }
  return findings;
}

// Null when a finding is in none of `reported` (then nothing is cached).
std::optional<json> findings_json(const std::vector<Finding> &findings,
                                  const std::vector<const SourceFile *> &reported) {
  json out = json::array();
  for (const Finding &f : findings) {
    size_t file = std::find(reported.begin(), reported.end(), f.file) - reported.begin();
    if (file == reported.size())
      return std::nullopt;
    json origins = json::array();
    for (const RelatedLocation &o : f.origins)
      origins.push_back({{"path", text_json(o.path)},
                         {"range", range_json(o.range)},
                         {"message", text_json(o.message)}});
    json fix = nullptr;
    if (f.fix) {
      json edits = json::array();
      for (const TextEdit &e : f.fix->edits)
        edits.push_back({e.begin, e.end, text_json(e.replacement)});
      fix = {{"applicability", static_cast<unsigned>(f.fix->applicability)},
             {"title", text_json(f.fix->title)},
             {"edits", edits}};
    }
    out.push_back({{"file", file},
                   {"code", text_json(f.code)},
                   {"rule", text_json(f.rule_name)},
                   {"message", text_json(f.message)},
                   {"summary", text_json(f.summary)},
                   {"range", range_json(f.range)},
                   {"origins", origins},
                   {"why", text_json(f.why)},
                   {"no_fix_reason", text_json(f.no_fix_reason)},
                   {"warning", f.level == FindingLevel::Warning},
                   {"placement", text_json(f.placement)},
                   {"fix", fix}});
  }
  return out;
}

json diagnostics_json(const std::vector<Diagnostic> &diagnostics) {
  json out = json::array();
  for (const Diagnostic &d : diagnostics)
    out.push_back({{"severity", static_cast<int>(d.severity)},
                   {"path", text_json(d.path)},
                   {"line", d.line},
                   {"column", d.column},
                   {"message", text_json(d.message)}});
  return out;
}

std::vector<Diagnostic> diagnostics_from(const json &array) {
  std::vector<Diagnostic> out;
  for (const json &j : array)
    out.push_back({severity_from(j.at("severity")), text_from(j.at("path")),
                   position_from(j.at("line")), position_from(j.at("column")),
                   text_from(j.at("message"))});
  return out;
}

// A header's text as the key sees it.
std::string text_hash(std::string_view text) { return CacheKeyBuilder().add(text).hex(); }

} // namespace

std::optional<CachedPackage>
ResultCache::load(const std::string &key, const std::vector<const SourceFile *> &reported) const {
  std::optional<json> found = read_entry(key);
  if (!found)
    return std::nullopt;
  try {
    const json &entry = *found;
    if (entry.at("files") != reported.size())
      return std::nullopt;
    CachedPackage package;
    auto findings = findings_from(entry.at("findings"), reported);
    if (!findings)
      return std::nullopt;
    package.findings = std::move(*findings);
    package.diagnostics = diagnostics_from(entry.at("diagnostics"));
    return package;
  } catch (const std::exception &) { // truncated, corrupt, or written by something else
    return std::nullopt;
  }
}

void ResultCache::store(const std::string &key, const std::vector<const SourceFile *> &reported,
                        const std::vector<Finding> &findings,
                        const std::vector<Diagnostic> &diagnostics) {
  std::optional<json> entry_findings = findings_json(findings, reported);
  if (!entry_findings)
    return; // cannot be keyed to a reported file: do not cache this package
  write_entry(key, {{"key", key},
                    {"files", reported.size()},
                    {"findings", *entry_findings},
                    {"diagnostics", diagnostics_json(diagnostics)}});
}

std::string ResultCache::package_direct_key(const std::vector<const SourceFile *> &reported,
                                            const CheckOptions &options) const {
  CacheKeyBuilder key;
  key.add("devlint-package-manifest/2").add(build_identity_).add(scope_);
  add_settings(key, options);
  key.add(reported.size());
  for (const SourceFile *file : reported)
    key.add(file->path).add(file->display_path).add(file->text);
  return key.hex();
}

std::optional<PackageManifest> ResultCache::load_manifest(const std::string &direct_key,
                                                          uint64_t max_file_bytes) const {
  std::optional<json> found = read_entry(direct_key);
  if (!found)
    return std::nullopt;
  try {
    const json &entry = *found;
    PackageManifest manifest;
    for (const json &path : entry.at("context")) {
      Diagnostic ignored;
      auto file = read_source_file(text_from(path), max_file_bytes, ignored);
      if (!file)
        return std::nullopt;
      manifest.context.push_back(std::move(file));
    }
    for (const json &path : entry.at("outside")) {
      Diagnostic ignored;
      auto file = read_source_file(text_from(path), max_file_bytes, ignored);
      if (!file)
        return std::nullopt;
      manifest.outside.emplace_back(text_from(path), std::move(file->text));
    }
    for (const json &path : entry.at("absent")) {
      std::error_code ec;
      if (fs::exists(text_from(path), ec))
        return std::nullopt; // a file that now shadows or supplies a module
    }
    return manifest;
  } catch (const std::exception &) { // truncated, corrupt, or written by something else
    return std::nullopt;
  }
}

void ResultCache::store_manifest(const std::string &direct_key,
                                 const std::vector<const SourceFile *> &context,
                                 const std::vector<std::pair<std::string, std::string>> &outside,
                                 const std::vector<std::string> &absent) {
  json context_paths = json::array(), outside_paths = json::array();
  json absent_paths = json::array();
  for (const SourceFile *file : context)
    context_paths.push_back(text_json(file->path));
  for (const auto &[path, text] : outside)
    outside_paths.push_back(text_json(path));
  for (const std::string &path : absent)
    absent_paths.push_back(text_json(path));
  write_entry(direct_key, {{"key", direct_key},
                           {"context", context_paths},
                           {"outside", outside_paths},
                           {"absent", absent_paths}});
}

std::string ResultCache::cpp_unit_key(const SourceFile &main, const CheckOptions &options,
                                      const std::vector<std::string> &compile_arguments) const {
  CacheKeyBuilder key;
  key.add("devlint-cpp-unit/2").add(build_identity_).add(scope_);
  add_settings(key, options);
  key.add(main.path).add(main.display_path).add(main.text);
  // Headers are shown relative to the working directory.
  std::error_code ec;
  key.add(fs::current_path(ec).string());
  add_strings(key, compile_arguments);
  key.add(options.cpp.libtorch_dir)
      .add(options.cpp.build_dir)
      .add(options.cpp.build_dir_confined_to);
  // LibTorch and the system headers are not hashed (too large): an in-place upgrade is seen by
  // the size and time of torch/torch.h in each include directory.
  for (size_t i = 0; i < compile_arguments.size(); ++i) {
    std::string directory;
    const std::string &a = compile_arguments[i];
    if (a.rfind("-I", 0) == 0 && a.size() > 2)
      directory = a.substr(2);
    else if ((a == "-I" || a == "-isystem") && i + 1 < compile_arguments.size())
      directory = compile_arguments[i + 1];
    else if (a.rfind("-isystem", 0) == 0 && a.size() > 8)
      directory = a.substr(8);
    struct stat info;
    if (!directory.empty() && stat((directory + "/torch/torch.h").c_str(), &info) == 0)
      key.add(directory)
          .add(static_cast<uint64_t>(info.st_size))
          .add(static_cast<uint64_t>(info.st_mtim.tv_sec))
          .add(static_cast<uint64_t>(info.st_mtim.tv_nsec));
  }
  return key.hex();
}

std::optional<CachedCppUnit> ResultCache::load_cpp_unit(const std::string &key,
                                                        const SourceFile &main,
                                                        uint64_t max_file_bytes) const {
  std::optional<json> found = read_entry(key);
  if (!found)
    return std::nullopt;
  try {
    const json &entry = *found;
    CachedCppUnit unit;
    std::vector<const SourceFile *> files{&main};
    // The project headers the unit included: each must still hold what it held.
    for (const json &h : entry.at("headers")) {
      Diagnostic ignored;
      auto header = read_source_file(text_from(h.at("path")), max_file_bytes, ignored);
      if (!header || text_hash(header->text) != h.at("hash").get_ref<const std::string &>())
        return std::nullopt;
      header->display_path = text_from(h.at("display"));
      files.push_back(header.get());
      unit.headers.push_back(std::move(header));
    }
    for (const json &c : entry.at("claimed"))
      unit.claimed.push_back(text_from(c));
    auto findings = findings_from(entry.at("findings"), files);
    if (!findings)
      return std::nullopt;
    unit.result.findings = std::move(*findings);
    unit.result.diagnostics = diagnostics_from(entry.at("diagnostics"));
    return unit;
  } catch (const std::exception &) { // truncated, corrupt, or written by something else
    return std::nullopt;
  }
}

void ResultCache::store_cpp_unit(const std::string &key, const SourceFile &main,
                                 const std::vector<const SourceFile *> &headers,
                                 const std::vector<std::string> &claimed,
                                 const std::vector<Finding> &findings,
                                 const std::vector<Diagnostic> &diagnostics) {
  std::vector<const SourceFile *> files{&main};
  files.insert(files.end(), headers.begin(), headers.end());
  std::optional<json> entry_findings = findings_json(findings, files);
  if (!entry_findings)
    return;
  json entry_headers = json::array(), entry_claimed = json::array();
  for (const SourceFile *h : headers)
    entry_headers.push_back({{"path", text_json(h->path)},
                             {"display", text_json(h->display_path)},
                             {"hash", text_hash(h->text)}});
  for (const std::string &path : claimed)
    entry_claimed.push_back(text_json(path));
  write_entry(key, {{"key", key},
                    {"headers", entry_headers},
                    {"claimed", entry_claimed},
                    {"findings", *entry_findings},
                    {"diagnostics", diagnostics_json(diagnostics)}});
}

void ResultCache::write_entry(const std::string &key, const json &entry) {
  // Best effort: a cache that cannot be written only costs time. Every string went through
  // text_json; `replace` only keeps a missed one from throwing.
  write_file_replacing((fs::path(entries_) / (key + ".json")).string(),
                       entry.dump(-1, ' ', false, json::error_handler_t::replace));
}

} // namespace devlint
