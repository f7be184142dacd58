// The fix applier, as `devlint check --fix FILE` runs it (driver/fix_loop.h) but in memory: apply
// what the rules propose until stable, then check the result independently of the loop's own
// checks: it parses no worse than the input, a second run changes nothing, and on an input that
// parsed cleanly no fix had to be dropped (a dropped fix is a rule proposing an unsafe edit).
#include <cstdint>

#include "driver/fix_loop.h"
#include "frontend/python/python_tokens.h"
#include "fuzz/fuzz_support.h"

using namespace devlint;

namespace {

AnalyzeTexts analyzer_for(const std::string &text) {
  return [text](const SourceTexts *texts, const std::string *) {
    CheckResult result;
    std::string current = texts ? texts->at(fuzz::kFuzzPath) : text;
    Diagnostic diagnostic;
    auto file = source_from_bytes(fuzz::kFuzzPath, std::move(current), diagnostic);
    DEVLINT_FUZZ_REQUIRE(file, "a fix made the file unreadable: " + diagnostic.message);
    const SourceFile *source = file.get();
    result.findings = check_package({source}, {source}, fuzz::fuzz_options());
    sort_findings(result.findings);
    result.files.push_back(std::move(file));
    result.files_checked = 1;
    return result;
  };
}

std::string dropped_list(const FixLoopResult &run) {
  std::string out;
  for (const DroppedFix &d : run.dropped)
    out += d.code + " line " + std::to_string(d.line) + ": " + d.reason + "\n";
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string original(reinterpret_cast<const char *>(data), size);
  Diagnostic diagnostic;
  if (!source_from_bytes(fuzz::kFuzzPath, original, diagnostic))
    return 0;
  size_t errors_before = classify_python_bytes(original).syntax_errors;

  FixLoopResult first = fix_until_stable(analyzer_for(original), FixLoopSettings{});
  DEVLINT_FUZZ_REQUIRE(errors_before > 0 || first.dropped.empty(), dropped_list(first));
  if (first.files.empty())
    return 0;
  DEVLINT_FUZZ_REQUIRE(first.files.size() == 1 && first.files[0].original == original, "");
  const std::string &fixed = first.files[0].fixed;
  DEVLINT_FUZZ_REQUIRE(classify_python_bytes(fixed).syntax_errors <= errors_before, fixed);

  FixLoopResult second = fix_until_stable(analyzer_for(fixed), FixLoopSettings{});
  DEVLINT_FUZZ_REQUIRE(second.files.empty(),
                       "a second --fix changed the file again:\n" + fixed + "\n---\n" +
                           (second.files.empty() ? "" : second.files[0].fixed));
  return 0;
}
