// Reading input files: every file gets the same checks (a regular file, size, binary, UTF-8),
// and texts that stand in for files (stdin, the fix loop's fixed text) become SourceFiles the same
// way.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "diagnostics/finding.h"
#include "model/source_file.h"

namespace devlint {

// Reads one file with the checks every input gets. Returns null and fills `diagnostic` when the
// file cannot be analyzed.
std::unique_ptr<SourceFile> read_source_file(const std::string &path, uint64_t max_bytes,
                                             Diagnostic &diagnostic);

// The checks of read_source_file on bytes already read (binary, UTF-8): the one place where any
// input, from disk or from a fuzzer, becomes a SourceFile. Returns null and fills `diagnostic`
// when the text cannot be analyzed.
std::unique_ptr<SourceFile> source_from_bytes(const std::string &path, std::string text,
                                              Diagnostic &diagnostic);

// A SourceFile for `path` holding `text` instead of what is on disk.
std::unique_ptr<SourceFile> source_from_text(const std::string &path, const std::string &text);

// `path` as shown to the user: relative to the working directory when below it.
std::string display_path(const std::filesystem::path &path);

} // namespace devlint
