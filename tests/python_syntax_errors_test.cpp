// The syntax-error pass: its anchored path (trees without ERROR or MISSING nodes) must report
// exactly what visiting every node reports, in the same order, on Python 2 forms wherever they
// sit and on text that only looks like them (docstrings, comments, numbers).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tree_sitter/api.h>

#include "frontend/python/python_lowering.h"
#include "frontend/python/python_syntax_errors.h"

namespace devlint {
namespace {

struct Parsed {
  std::unique_ptr<TSParser, void (*)(TSParser *)> parser{ts_parser_new(), ts_parser_delete};
  std::unique_ptr<TSTree, void (*)(TSTree *)> tree{nullptr, ts_tree_delete};
  explicit Parsed(const std::string &text) {
    ts_parser_set_language(parser.get(), tree_sitter_python());
    tree.reset(ts_parser_parse_string(parser.get(), nullptr, text.data(),
                                      static_cast<uint32_t>(text.size())));
  }
  TSNode root() const { return ts_tree_root_node(tree.get()); }
};

std::string describe(const std::vector<SyntaxErrorNote> &errors) {
  std::string out;
  for (const SyntaxErrorNote &e : errors)
    out +=
        std::to_string(e.range.begin) + "-" + std::to_string(e.range.end) + " " + e.message + "\n";
  return out;
}

const char *const kPython2 = R"(import torch
"""Docs with `backticks`, a date 2023-01-05, 0777 and 10L, `print x`, a <> b, except E, e."""
# print "x"; exec "y"; raise E, "m"; `z`; 0755; 3L
x = 0777 + 10L + 0o17 + 0 + 00 + 1.0777 + 0x1FL
print "a", `x`
print >> f, x <> y
exec "code" in ns
def f(a=0644):
    if a <> 1:
        raise ValueError, "bad %d" % 0644L
    try:
        print a
    except (IOError, OSError), e:
        return `e`
    return [print_x for print_x in exec_list if raise_flag <> 2]
class M:
    def g(self):
        return f"{x!r} `{0777}`" + 'print 1'
print
)";

TEST(PythonSyntaxErrors, AnchoredPathMatchesTheFullWalk) {
  Parsed parsed(kPython2);
  ASSERT_FALSE(ts_node_has_error(parsed.root()));
  std::string walked = describe(find_python_syntax_errors_by_walk(parsed.root(), kPython2));
  EXPECT_EQ(describe(find_python_syntax_errors(parsed.root(), kPython2)), walked);
  // The sample holds every Python 2 form (and would pass vacuously without them).
  for (const char *form : {"print` statement", "exec` statement", "<>", "except X, e:",
                           "raise E, value", "backticks", "long integer", "octal literal"})
    EXPECT_NE(walked.find(form), std::string::npos) << form;
}

TEST(PythonSyntaxErrors, ValidPython3HasNone) {
  const std::string text = "\"\"\"`x` 0777 10L print x\"\"\"\n# a <> b\nprint(`1` if 0 else 1)\n";
  const std::string valid = "\"\"\"`x` 0777 10L print x\"\"\"\n# a <> b\nprint('x', 0o7, 10)\n";
  Parsed parsed(valid);
  EXPECT_TRUE(find_python_syntax_errors(parsed.root(), valid).empty());
  Parsed with_backtick(text);
  EXPECT_EQ(describe(find_python_syntax_errors(with_backtick.root(), text)),
            describe(find_python_syntax_errors_by_walk(with_backtick.root(), text)));
}

TEST(PythonSyntaxErrors, KeepsTheCapAndCountsTheRest) {
  std::string text;
  for (int i = 0; i < 30; ++i)
    text += "print " + std::to_string(i) + "\n";
  Parsed parsed(text);
  auto anchored = find_python_syntax_errors(parsed.root(), text);
  ASSERT_EQ(anchored.size(), kMaxSyntaxErrorsPerFile);
  EXPECT_NE(anchored.back().message.find("and 10 more"), std::string::npos);
  EXPECT_EQ(describe(anchored), describe(find_python_syntax_errors_by_walk(parsed.root(), text)));
}

} // namespace
} // namespace devlint
