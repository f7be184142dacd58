// Discovery: which files a `devlint check` run looks at, grouped by directory (a directory is a
// package), with the options that govern each directory.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "driver/check_run.h"

namespace devlint {

struct PackageJob {
  std::vector<std::string> paths; // reported files
  // The directory the user asked to check that holds them (a file's own directory when it was
  // named): parent-package imports are followed only inside it (package_grouping.h).
  std::string root;
  std::unordered_set<std::string> by_content; // paths kept only if they look like model code
  const CheckOptions *options = nullptr;
};

using OptionsForDirectory = std::function<const CheckOptions &(const std::filesystem::path &)>;

// The packages under `paths` by directory (ordered, for determinism); a path in `texts` (stdin,
// an editor buffer) needs no file on disk. Inputs that cannot be checked (missing, unlistable,
// dangling links) are reported in `result` (diagnostics, files_not_checked, had_error).
std::map<std::string, PackageJob> discover_packages(const std::vector<std::string> &paths,
                                                    const OptionsForDirectory &options_for,
                                                    const SourceTexts *texts, CheckResult &result);

// Files kept by content rather than by name: only those that use torch, or patch transformers'
// models (`LlamaAttention.forward = patched_forward` in a file that imports no torch).
bool looks_like_model_code(const std::string &text);
// C++ sources kept by content: those that include a torch header, directly or through the
// project headers they include with quotes (`#include "model.h"` including torch/torch.h), found
// next to the including file or in the `include/` folders of its directory and its ancestors up
// to its checkout (else `root`, the directory the user asked to check), as Clang is given them
// without a database.
bool uses_libtorch(const std::string &path, const std::string &text, const std::string &root);

} // namespace devlint
