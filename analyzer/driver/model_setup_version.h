// Which transformers release a model is loaded with: the one installed on the search path (its
// dist-info METADATA, read as text, never imported), else the newest release devlint's placement
// rules follow. Placement differs between releases (docs/DEVICE_MODEL.md, "transformers 5").
#pragma once

#include <string>
#include <vector>

namespace devlint {

// The newest transformers release whose placement rules devlint follows.
inline constexpr const char *kNewestKnownTransformers = "5.17.0";

struct TransformersVersion {
  std::string version; // "4.47.1", "5.17.0"
  int major = 5;
  std::string source; // the METADATA file read, or why the newest known release is assumed
};

// Looks in each directory of `paths`, in order, for `transformers-*.dist-info/METADATA` and reads
// its `Version:` line.
TransformersVersion find_transformers_version(const std::vector<std::string> &paths);

// The same over the search paths, then the Python environment's import paths when asked.
TransformersVersion installed_transformers_version(const std::vector<std::string> &search_paths,
                                                   bool search_python_environment);

} // namespace devlint
