#include "driver/fix_safety.h"

#include "frontend/python/python_tokens.h"

namespace devlint {
namespace {

const char *class_name(ByteClass c) {
  switch (c) {
  case ByteClass::Code:
    return "code";
  case ByteClass::Comment:
    return "comment";
  case ByteClass::String:
    return "string";
  }
  return "?";
}

// "line 3": where a byte of `text` is, for the message.
std::string line_of(const std::string &text, size_t offset) {
  size_t line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i)
    line += text[i] == '\n';
  return "line " + std::to_string(line);
}

} // namespace

std::optional<std::string> fix_pass_problem(const std::string &before, const std::string &after,
                                            const std::vector<TextEdit> &edits,
                                            bool python_tokens) {
  // The edited text must be exactly the unedited bytes with the replacements in between.
  size_t cursor = 0, expected_size = before.size();
  for (const TextEdit &e : edits) {
    if (e.begin < cursor || e.end < e.begin || e.end > before.size())
      return std::string("its edits overlap or lie outside the file");
    expected_size = expected_size - (e.end - e.begin) + e.replacement.size();
    cursor = e.end;
  }
  if (after.size() != expected_size)
    return std::string("it changed bytes outside its edits");
  if (!python_tokens) {
    size_t old_pos = 0, new_pos = 0;
    for (const TextEdit &e : edits) {
      if (before.compare(old_pos, e.begin - old_pos, after, new_pos, e.begin - old_pos) != 0)
        return "it changed bytes outside its edits (" + line_of(before, old_pos) + ")";
      new_pos += e.begin - old_pos;
      if (after.compare(new_pos, e.replacement.size(), e.replacement) != 0)
        return "its edits were not applied as written (" + line_of(before, e.begin) + ")";
      new_pos += e.replacement.size();
      old_pos = e.end;
    }
    if (before.compare(old_pos, std::string::npos, after, new_pos, std::string::npos) != 0)
      return "it changed bytes outside its edits (" + line_of(before, old_pos) + ")";
    return std::nullopt;
  }
  PythonTokens old_tokens = classify_python_bytes(before);
  PythonTokens new_tokens = classify_python_bytes(after);
  if (new_tokens.syntax_errors > old_tokens.syntax_errors)
    return std::string("it would introduce a syntax error");
  size_t old_pos = 0, new_pos = 0;
  auto compare_unedited = [&](size_t old_end) -> std::optional<std::string> {
    for (; old_pos < old_end; ++old_pos, ++new_pos) {
      if (before[old_pos] != after[new_pos])
        return "it changed bytes outside its edits (" + line_of(before, old_pos) + ")";
      if (old_tokens.classes[old_pos] != new_tokens.classes[new_pos])
        return "it would turn " + std::string(class_name(old_tokens.classes[old_pos])) + " into " +
               class_name(new_tokens.classes[new_pos]) + " (" + line_of(before, old_pos) + ")";
    }
    return std::nullopt;
  };
  for (const TextEdit &e : edits) {
    if (auto problem = compare_unedited(e.begin))
      return problem;
    std::vector<ByteClass> intended = lex_python_fragment(e.replacement);
    for (size_t k = 0; k < e.replacement.size(); ++k, ++new_pos)
      if (new_tokens.classes[new_pos] != intended[k])
        return "its replacement `" + e.replacement + "` would be read as " +
               class_name(new_tokens.classes[new_pos]) + ", not " + class_name(intended[k]) + " (" +
               line_of(after, new_pos) + ")";
    old_pos = e.end;
  }
  if (auto problem = compare_unedited(before.size()))
    return problem;
  return std::nullopt;
}

uint32_t offset_before_edits(uint32_t offset_after, const std::vector<TextEdit> &edits) {
  int64_t shift = 0; // after - before, for the edits passed so far
  for (const TextEdit &e : edits) {
    int64_t new_begin = e.begin + shift;
    int64_t new_end = new_begin + static_cast<int64_t>(e.replacement.size());
    if (offset_after < new_begin)
      break;
    if (offset_after < new_end)
      return e.begin;
    shift += static_cast<int64_t>(e.replacement.size()) - (e.end - e.begin);
  }
  return static_cast<uint32_t>(offset_after - shift);
}

} // namespace devlint
