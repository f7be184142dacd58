// The editor server's session (issue 27, item 7): incremental parsing lowers every edited text as
// a fresh parse does, and a check with a session (reparsed document, context files lowered once,
// remembered placements) reports what a check without one reports.
#include <random>
#include <sstream>

#include "driver/check_run.h"
#include "driver/session_cache.h"
#include "frontend/python/incremental_python.h"
#include "frontend/python/python_frontend.h"
#include "test_support.h"

namespace devlint {
namespace {

using testing::source;

void dump_range(std::ostream &out, const SourceRange &r) {
  out << "@" << r.begin << "-" << r.end << ":" << r.line << "." << r.column << "-" << r.end_line
      << "." << r.end_column;
}

void dump_expr(std::ostream &out, const Expr *e, int depth = 0) {
  if (!e || depth > 200) {
    out << "_";
    return;
  }
  out << "(" << static_cast<int>(e->kind) << " '" << e->text << "'";
  dump_range(out, e->range);
  for (const Expr *o : e->operands)
    dump_expr(out, o, depth + 1);
  for (const Keyword &k : e->keywords) {
    out << " " << k.name << "=";
    dump_expr(out, k.value, depth + 1);
  }
  out << ")";
}

void dump_block(std::ostream &out, const std::vector<Stmt *> &block, int depth = 0);

void dump_stmt(std::ostream &out, const Stmt *s, int depth) {
  out << "[" << static_cast<int>(s->kind) << " '" << s->text << "'";
  dump_range(out, s->range);
  for (const Expr *e : s->targets)
    dump_expr(out, e);
  out << "|";
  for (const Expr *e : s->items)
    dump_expr(out, e);
  out << "|";
  dump_expr(out, s->value);
  dump_block(out, s->body, depth + 1);
  dump_block(out, s->orelse, depth + 1);
  for (const auto &handler : s->handlers)
    dump_block(out, handler, depth + 1);
  dump_block(out, s->finalbody, depth + 1);
  if (const FunctionDef *f = s->function) {
    out << " def " << f->name;
    dump_range(out, f->name_range);
    for (const Parameter &p : f->parameters) {
      out << " " << p.name << ":" << p.annotation << (p.variadic ? "*" : "");
      dump_expr(out, p.default_value);
    }
    out << (f->is_staticmethod ? " static" : "") << (f->is_classmethod ? " classmethod" : "");
    dump_block(out, f->body, depth + 1);
  }
  if (const ClassDef *c = s->class_def) {
    out << " class " << c->name;
    for (const Expr *b : c->bases)
      dump_expr(out, b);
    out << " methods " << c->methods.size();
    dump_block(out, c->body, depth + 1);
  }
  out << "]\n";
}

void dump_block(std::ostream &out, const std::vector<Stmt *> &block, int depth) {
  out << "{";
  if (depth < 100)
    for (const Stmt *s : block)
      dump_stmt(out, s, depth);
  out << "}";
}

std::string dump(const SyntaxFile &file) {
  std::ostringstream out;
  dump_block(out, file.body);
  for (const ImportedName &i : file.imports)
    out << "import " << i.local_name << " " << i.module << " " << i.name << "\n";
  for (const SyntaxErrorNote &error : file.syntax_errors)
    dump_range(out, error.range), out << error.message;
  for (const SourceRange &r : file.too_deep)
    dump_range(out, r);
  out << " classes " << file.classes.size() << " functions " << file.functions.size();
  return out.str();
}

std::string model_text() {
  return testing::read_file(std::filesystem::path(DEVLINT_TESTS_DATA_DIR) / "modeling_tiny.py");
}

TEST(IncrementalPython, LowersEveryEditAsAFreshParseDoes) {
  std::string text = model_text();
  ASSERT_FALSE(text.empty());
  IncrementalPythonParser parser;
  std::mt19937 random(27);
  // Edits as typing makes them: characters inserted and deleted anywhere (syntax errors
  // included), lines duplicated and removed, multi-byte characters and CRLF line ends.
  const std::vector<std::string> pieces = {"x",    "(",
                                           ")",    ":",
                                           "\n",   "    ",
                                           "\"",   "é",
                                           "#",    "torch.cat((a, b))",
                                           "\r\n", "def f(self):\n  "};
  for (int step = 0; step < 300; ++step) {
    auto file = source(text);
    auto incremental = parser.lower(*file);
    auto fresh = lower_python(*file);
    ASSERT_EQ(dump(*incremental), dump(*fresh)) << "after step " << step << ":\n" << text;
    size_t at = text.empty() ? 0 : random() % text.size();
    switch (random() % 4) {
    case 0:
    case 1:
      text.insert(at, pieces[random() % pieces.size()]);
      break;
    case 2:
      text.erase(at, random() % 6);
      break;
    default: { // a line moved elsewhere
      size_t start = text.rfind('\n', at), end = text.find('\n', at);
      start = start == std::string::npos ? 0 : start + 1;
      end = end == std::string::npos ? text.size() : end + 1;
      std::string line = text.substr(start, end - start);
      text.erase(start, end - start);
      text.insert(text.empty() ? 0 : random() % text.size(), line);
    }
    }
  }
}

TEST(IncrementalPython, HandlesAByteOrderMarkAndAnEmptyText) {
  IncrementalPythonParser parser;
  for (std::string text : {std::string("x = 1\n"), std::string("\xEF\xBB\xBFx = 1\n"),
                           std::string(), std::string("class A:\n    pass\n")}) {
    auto file = source(text);
    EXPECT_EQ(dump(*parser.lower(*file)), dump(*lower_python(*file))) << text;
  }
}

std::string findings_text(const CheckResult &result) {
  std::ostringstream out;
  for (const Finding &f : result.findings)
    out << f.file->display_path << ":" << f.range.line << ":" << f.range.column << " " << f.code
        << " " << f.message << " [" << f.placement << "]\n";
  for (const Diagnostic &d : result.diagnostics)
    out << d.path << ":" << d.line << " " << d.message << "\n";
  return out.str();
}

// A package of two files: the checked one imports its sibling's block.
TEST(SessionCache, ChecksWithASessionReportWhatChecksWithoutOneReport) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "devlint_session_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // devmap_tiny has a configuration: findings are ranked by simulated placements.
  std::filesystem::path tiny = std::filesystem::path(DEVLINT_TESTS_DATA_DIR) / "devmap_tiny";
  std::filesystem::copy_file(tiny / "config.json", dir / "config.json");
  std::string main_text = testing::read_file(tiny / "modeling_tiny.py");
  main_text.replace(main_text.find("class TinyBlock"), 0, "from .blocks import Extra\n\n\n");
  main_text.replace(main_text.find("return self.norm(h)"), 19,
                    "return self.norm(h) + self.embed(input_ids)");
  {
    std::ofstream sibling(dir / "blocks.py");
    sibling << "import torch\nfrom torch import nn\n\n\nclass Extra(nn.Module):\n"
               "    def forward(self, x):\n        return x\n";
  }
  std::string path = (dir / "modeling_tiny.py").string();
  SessionCache session;
  std::vector<std::string> versions = {main_text, "\n\n" + main_text,
                                       main_text + "\n    def broken(self:\n",
                                       main_text.substr(0, main_text.size() / 2), main_text};
  for (const std::string &text : versions) {
    SourceTexts texts{{path, text}};
    CheckOptions options;
    options.jobs = 1;
    CheckResult plain = check_paths({path}, options, nullptr, &texts);
    CheckResult with_session = check_paths({path}, options, nullptr, &texts, {nullptr, &session});
    EXPECT_EQ(findings_text(with_session), findings_text(plain));
    if (&text == &versions.front()) {
      EXPECT_NE(findings_text(plain).find("DL00"), std::string::npos) << findings_text(plain);
    }
    EXPECT_EQ(with_session.files.size(), plain.files.size()); // the sibling is in both
  }
  EXPECT_EQ(session.context_files_lowered(), 1u); // blocks.py never changed
  EXPECT_GE(session.simulations().simulations_run(), 1u);
  std::filesystem::remove_all(dir);
}

TEST(SimulationMemo, SimulatesEachTreeOnce) {
  ModuleTree tree;
  ModuleNode &root = tree.nodes.emplace_back();
  root.class_name = "Root";
  tree.root = &root;
  for (int i = 0; i < 4; ++i) {
    ModuleNode &layer = tree.nodes.emplace_back();
    layer.class_name = "Layer";
    TreeTensor weight;
    weight.name = "weight";
    weight.numel = 1 << 20;
    layer.parameters.push_back(weight);
    root.children.push_back({std::to_string(i), &layer});
  }
  SimulationMemo memo;
  SimulationRequest request;
  DeviceMap first = memo.map_for(tree, request);
  EXPECT_EQ(memo.map_for(tree, request).entries, first.entries);
  EXPECT_EQ(first.entries, simulate_device_map(tree, request).map.entries);
  EXPECT_EQ(memo.simulations_run(), 1u);
  request.gpus = 3; // another request, another simulation
  memo.map_for(tree, request);
  root.children[0].second->parameters[0].numel = 1 << 22; // another tree too
  memo.map_for(tree, request);
  EXPECT_EQ(memo.simulations_run(), 3u);
}

} // namespace
} // namespace devlint
