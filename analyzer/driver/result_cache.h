// The result cache, as Ruff's: a package's findings are stored under a key that hashes everything
// they depend on (the text and path of every file analyzed with it, the names of the Python files
// beside it that a relative import could pull in, the model config next to it, the effective
// settings, the project's absolute path and devlint's version and build), so an unchanged package
// is not analyzed again and any change re-analyzes it.
//
// The cache belongs to the user, not to the repository checked (driver/cache_location.h says
// where): a checked-out repository is untrusted input, and one that ships a cache must not decide
// what devlint reports or where it writes. Its directories are private to the user (checked when
// the cache is opened; an unfit one is not used), entries are written to a fresh O_EXCL|O_NOFOLLOW
// file and renamed into place (a planted link is replaced, not written through; concurrent runs
// never see half an entry), and an entry is validated when read: one that does not parse, does
// not carry its key, has a field of the wrong type or a position outside its file is a miss, so a
// corrupt or truncated cache falls back to analysis, never to wrong results. Strings that are not
// UTF-8 (file names) are stored as hex, so every file name round-trips.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "diagnostics/finding.h"

namespace devlint {

struct CheckOptions;

// 128 bits of a non-cryptographic hash over length-prefixed fields, as hex.
class CacheKeyBuilder {
public:
  CacheKeyBuilder &add(std::string_view field);
  CacheKeyBuilder &add(uint64_t value);
  std::string hex() const;

private:
  uint64_t low_ = 0x9e3779b97f4a7c15ull, high_ = 0xc2b2ae3d27d4eb4full;
  uint64_t length_ = 0;
  void mix(uint64_t word);
};

// What a package's analysis produced: findings of its reported files (by index into the list of
// reported files) and the diagnostics the analysis itself raised (syntax errors).
struct CachedPackage {
  std::vector<Finding> findings; // `file` is set by load() from `reported`
  std::vector<Diagnostic> diagnostics;
};

// What a C++ translation unit's analysis produced, with the project headers it included (read
// again and checked against their hashes) and those whose findings the run that stored it
// reported (each header is reported by the first unit of a run that includes it).
struct CachedCppUnit {
  std::vector<std::unique_ptr<SourceFile>> headers;
  std::vector<std::string> claimed; // paths
  CachedPackage result;             // findings keyed to the main file and `headers`
};

// What a package's key read besides its reported files, as its manifest lists them (read again).
struct PackageManifest {
  std::vector<std::unique_ptr<SourceFile>> context;         // siblings, in key order
  std::vector<std::pair<std::string, std::string>> outside; // search-path files: path, text
};

class ResultCache {
public:
  // The cache of the project at `project_root` (absolute) under the cache directory `root`: its
  // entries live in `root/results/<project>/<version>`. Null, with `problem` set, when a directory
  // of that path cannot be made or is not private to this user.
  static std::unique_ptr<ResultCache> open(const std::string &root, const std::string &project_root,
                                           std::string &problem);

  // The key of one package: its files (reported ones first, then context), the settings that
  // govern it (the search paths among them), the Python file names and model config in its
  // directory, and the files on the search paths its imports read (`outside`: path and text).
  std::string
  package_key(const std::vector<const SourceFile *> &reported,
              const std::vector<const SourceFile *> &context, const CheckOptions &options,
              const std::vector<std::pair<std::string, std::string>> &outside = {}) const;

  // Null on a miss, or when the entry is unreadable, corrupt or for another key.
  std::optional<CachedPackage> load(const std::string &key,
                                    const std::vector<const SourceFile *> &reported) const;
  // Best effort: a cache that cannot be written only costs time.
  void store(const std::string &key, const std::vector<const SourceFile *> &reported,
             const std::vector<Finding> &findings, const std::vector<Diagnostic> &diagnostics);

  // A warm run finds a package's entry without lowering anything (as ccache's direct mode): the
  // direct key hashes only the reported files and the settings, and its manifest lists the other
  // files the full key read last time (siblings, files on the search paths). They are read again
  // and the full key recomputed from them, so any change is a miss. It also lists the files looked
  // for and not found (a sibling a relative import names, a module's candidates on the search
  // paths before the one read): one that appears is a miss too.
  std::string package_direct_key(const std::vector<const SourceFile *> &reported,
                                 const CheckOptions &options) const;
  // Null on a miss: no manifest, a corrupt one, or a listed file that cannot be read.
  std::optional<PackageManifest> load_manifest(const std::string &direct_key,
                                               uint64_t max_file_bytes) const;
  void store_manifest(const std::string &direct_key, const std::vector<const SourceFile *> &context,
                      const std::vector<std::pair<std::string, std::string>> &outside,
                      const std::vector<std::string> &absent);

  // A translation unit's key: its text and path, the compile arguments it is parsed with (its
  // compile_commands.json entry or the defaults), the settings, and the size and time of the
  // LibTorch headers in its include directories. The project headers it includes are checked
  // by content when the entry is loaded (as ccache's direct mode: their list is in the entry).
  std::string cpp_unit_key(const SourceFile &main, const CheckOptions &options,
                           const std::vector<std::string> &compile_arguments) const;
  // Null on a miss: no entry, a corrupt one, or a header that changed or went away.
  std::optional<CachedCppUnit> load_cpp_unit(const std::string &key, const SourceFile &main,
                                             uint64_t max_file_bytes) const;
  void store_cpp_unit(const std::string &key, const SourceFile &main,
                      const std::vector<const SourceFile *> &headers,
                      const std::vector<std::string> &claimed, const std::vector<Finding> &findings,
                      const std::vector<Diagnostic> &diagnostics);

  // Where this project's entries are (`root/results/<project>/<version>`).
  const std::string &entries_directory() const { return entries_; }

private:
  ResultCache(std::string entries, std::string scope);
  std::optional<nlohmann::json> read_entry(const std::string &key) const;
  void write_entry(const std::string &key, const nlohmann::json &entry);

  std::string entries_;
  std::string build_identity_;
  std::string scope_; // the project root and the working directory, in every key
};

} // namespace devlint
