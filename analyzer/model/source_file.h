// A file's text and positions in it. Every later stage points into SourceFile::text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace devlint {

// A half-open byte range with 1-based line/column for both ends (columns count bytes).
struct SourceRange {
  uint32_t begin = 0;
  uint32_t end = 0;
  uint32_t line = 0;
  uint32_t column = 0;
  uint32_t end_line = 0;
  uint32_t end_column = 0;
};

// The language a file is written in: it picks the frontend, the device model (Python code may be
// dispatched by accelerate, LibTorch C++ code is placed explicitly) and the syntax of fixes.
enum class Language : uint8_t { Python, Cpp };

struct SourceFile {
  Language language = Language::Python;
  std::string path;         // as given on the command line (or found under a directory)
  std::string display_path; // relative path used in reports
  std::string text;
  std::vector<uint32_t> line_starts; // byte offset of each line

  void index_lines();
  std::string_view slice(const SourceRange &range) const {
    return std::string_view(text).substr(range.begin, range.end - range.begin);
  }
  std::string_view line_text(uint32_t line) const; // 1-based, without the newline
  uint32_t line_count() const { return static_cast<uint32_t>(line_starts.size()); }
  // The 1-based line and byte column of a byte offset (the one lookup every stage uses).
  void position(uint32_t offset, uint32_t &line, uint32_t &column) const;
  // The range of bytes [begin, end) with the lines and columns of both ends.
  SourceRange range_of(uint32_t begin, uint32_t end) const;
};

} // namespace devlint
