// What the fuzz targets share: the invariant check that turns a broken property into a crash
// libFuzzer records, and the options every target analyzes with.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "driver/check_run.h"
#include "driver/source_reading.h"

namespace devlint::fuzz {

// Aborts with a message: libFuzzer saves the input as a crash, the replay driver fails the test.
[[noreturn]] inline void invariant_failed(const char *what, const std::string &detail) {
  std::fprintf(stderr, "devlint fuzz: invariant broken: %s\n%s\n", what, detail.c_str());
  std::abort();
}

#define DEVLINT_FUZZ_REQUIRE(condition, detail)                                                    \
  do {                                                                                             \
    if (!(condition))                                                                              \
      ::devlint::fuzz::invariant_failed(#condition, (detail));                                     \
  } while (0)

// The path every fuzzed file is analyzed under: a model file, so every rule applies.
inline const char *kFuzzPath = "fuzz_input/modeling_fuzz.py";

// Every rule, and DL900, so suppression comments and their removal fixes are exercised too.
inline CheckOptions fuzz_options() {
  CheckOptions options;
  options.jobs = 1;
  options.report_unused_suppressions = true;
  return options;
}

} // namespace devlint::fuzz
