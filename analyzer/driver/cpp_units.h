// C++ translation units in a run: each is its own package (the main file and the project headers
// it includes) and is checked on its own, on any thread. A header several units include is
// reported once, by the first of them in the run's order (directories, then paths, as
// discovered): that is decided after the units ran (HeaderClaims), so the report does not
// depend on which thread finished first.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "config/check_options.h"
#include "diagnostics/finding.h"
#include "driver/check_run.h"

namespace devlint {

struct CppUnitResult {
  std::vector<std::unique_ptr<SourceFile>> headers; // the project headers reported with the unit
  std::vector<Finding> findings;                    // in the main file and in `headers`
  std::vector<Diagnostic> diagnostics;
  bool error = false; // a missing header, a refused file, a crash: the run exits with 2
};

// Checks one unit. With `report_headers`, the project headers it includes are reported with it
// (a run then keeps each header's findings once, see HeaderClaims); without, only the main
// file. The cache (with `report_headers` only) keeps a unit whose text, compile arguments and
// headers are unchanged. `run_options` give the callbacks per-directory options do not carry.
CppUnitResult check_cpp_unit(const SourceFile &main, const CheckOptions &options,
                             const SourceTexts *texts, bool report_headers,
                             ResultCache *cache = nullptr,
                             const CheckOptions *run_options = nullptr);

// A share of a run's work for one thread: a package's Python files together (they import each
// other), or one C++ translation unit, so that the units of one directory run in parallel.
struct CheckTask {
  size_t package;
  size_t path; // a C++ unit: its index in the package's paths; kPythonFiles: the Python files
};
inline constexpr size_t kPythonFiles = SIZE_MAX;
bool is_cpp_path(const std::string &path); // a source or header file: its own unit
// The tasks of the packages (each its paths), in the order threads take them: C++ units first
// (each a Clang parse of seconds), then the largest (by bytes on disk), so that no large task
// starts last and leaves the other threads idle.
std::vector<CheckTask>
plan_check_tasks(const std::vector<const std::vector<std::string> *> &packages);

// Which unit reports a header: the first one, in the order `resolve` is called, that includes it.
class HeaderClaims {
public:
  // Removes from `unit` the findings, diagnostics and files of headers an earlier unit claimed.
  void resolve(CppUnitResult &unit);

private:
  std::unordered_set<std::string> claimed_;
};

} // namespace devlint
