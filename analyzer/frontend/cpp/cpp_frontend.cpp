#include "frontend/cpp/cpp_frontend.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include <clang/Basic/DiagnosticLex.h>

#include "frontend/cpp/clang_tool_run.h"
#include "frontend/cpp/compile_database.h"
#include "frontend/cpp/confined_file_system.h"
#include "frontend/cpp/lowerer.h"
#include "frontend/cpp/torch_setup.h"
#include "model/file_input.h"
#include "model/text.h"

namespace devlint {
namespace fs = std::filesystem;
using namespace cpp;

bool cpp_frontend_available() { return true; }

namespace {

bool has_extension(const std::string &path, std::initializer_list<const char *> extensions) {
  std::string ext = fs::path(path).extension().string();
  for (const char *e : extensions)
    if (ext == e)
      return true;
  return false;
}

// A debugging aid: DEVLINT_DUMP_CPP=1 prints what a unit was lowered to.
void dump_expr(const Expr *e, std::ostream &out) {
  if (!e) {
    out << "null";
    return;
  }
  static const char *const kinds[] = {"Name",  "Attr",  "Sub",   "Call",   "Bin",   "Cmp",  "Un",
                                      "Bool",  "Cond",  "Tuple", "Dict",   "Num",   "Str",  "None",
                                      "BoolL", "Slice", "Star",  "Lambda", "Compr", "Other"};
  out << kinds[static_cast<int>(e->kind)] << "<" << e->text << ">(";
  for (const Expr *o : e->operands) {
    dump_expr(o, out);
    out << ",";
  }
  for (const Keyword &k : e->keywords) {
    out << k.name << "=";
    dump_expr(k.value, out);
    out << ",";
  }
  out << ")";
}

void dump_body(const std::vector<Stmt *> &body, int depth, std::ostream &out) {
  for (const Stmt *s : body) {
    out << std::string(depth * 2, ' ') << "stmt" << static_cast<int>(s->kind) << " L"
        << s->range.line << " ";
    for (const Expr *t : s->targets) {
      dump_expr(t, out);
      out << " = ";
    }
    dump_expr(s->value, out);
    out << "\n";
    dump_body(s->body, depth + 1, out);
    dump_body(s->orelse, depth + 1, out);
  }
}

void dump_unit(const CppUnit &unit, std::ostream &out) {
  for (const auto &file : unit.syntax) {
    out << "== " << file->source->path << "\n";
    for (const ClassDef *c : file->classes) {
      out << "class " << c->name << "\n";
      for (const FunctionDef *f : c->methods) {
        out << " def " << f->name << "\n";
        dump_body(f->body, 2, out);
      }
    }
    for (const FunctionDef *f : file->functions) {
      out << "def " << f->name << "\n";
      dump_body(f->body, 1, out);
    }
  }
}

// Whether a file includes a torch header, itself or through the project headers it includes by
// a quoted path, found relative to itself or in the `-I`/`-iquote` directories of its flags:
// then the precompiled header saves parsing `torch/torch.h` again. `texts` stand in for files on
// disk.
bool includes_torch(const std::string &text, const fs::path &directory,
                    const std::vector<fs::path> &include_dirs,
                    const std::map<std::string, std::string> &texts, std::set<std::string> &seen) {
  if (text.find("torch/") != std::string::npos)
    return true;
  for (size_t at = text.find("#include \""); at != std::string::npos && seen.size() < 64;
       at = text.find("#include \"", at + 1)) {
    size_t begin = at + 10, end = text.find('"', begin);
    if (end == std::string::npos || text.find('\n', begin) < end)
      continue;
    std::string name = text.substr(begin, end - begin);
    std::vector<fs::path> candidates{directory / name};
    for (const fs::path &dir : include_dirs)
      candidates.push_back(dir / name);
    for (const fs::path &candidate : candidates) {
      std::string path = candidate.lexically_normal().string();
      if (!seen.insert(path).second)
        continue;
      std::string header;
      if (auto given = texts.find(path); given != texts.end()) {
        header = given->second;
      } else {
        std::string why;
        std::optional<std::string> read = read_regular_file(path, 1 << 20, why);
        if (!read)
          continue;
        header = std::move(*read);
      }
      if (includes_torch(header, fs::path(path).parent_path(), include_dirs, texts, seen))
        return true;
      break; // the first header found by that name is the one included
    }
  }
  return false;
}

// The `-I DIR` and `-iquote DIR` directories of a file's arguments, where quoted includes are
// also looked for.
std::vector<fs::path> quoted_include_dirs(const std::vector<std::string> &args) {
  std::vector<fs::path> out;
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "-I" || args[i] == "-iquote")
      out.emplace_back(args[i + 1]);
  return out;
}

} // namespace

bool is_cpp_source_path(const std::string &path) {
  return has_extension(path, {".cpp", ".cc", ".cxx"});
}
bool is_cpp_header_path(const std::string &path) {
  return has_extension(path, {".h", ".hh", ".hpp", ".hxx"});
}

namespace {

// The database entry's flags, else the defaults with the project's include/ folders.
std::vector<std::string> arguments_for(const std::string &main, const CompileSetup &setup,
                                       const CppSettings &settings) {
  if (setup.from_database)
    return database_arguments(setup);
  std::vector<std::string> args = base_arguments(settings);
  std::vector<std::string> project = project_include_arguments(main, setup.checkout);
  args.insert(args.end(), project.begin(), project.end());
  return args;
}

} // namespace

std::vector<std::string> cpp_compile_arguments(const std::string &main,
                                               const CppSettings &settings) {
  CompileSetup setup = compile_setup_for(main, settings.build_dir, trusted_roots(settings),
                                         settings.build_dir_confined_to, settings.build_dir_source);
  std::vector<std::string> args = arguments_for(main, setup, settings);
  // What else decides the result: where Clang may read, and the warnings about the database.
  args.push_back(setup.checkout);
  args.insert(args.end(), setup.warnings.begin(), setup.warnings.end());
  return args;
}

std::vector<std::string> default_cpp_arguments(const CppSettings &settings) {
  return base_arguments(settings);
}

std::string prepare_cpp_pch(const CppSettings &settings, std::string &error) {
  return build_pch(settings, base_arguments(settings), error);
}

CppUnit lower_cpp(const SourceFile &main, const CppSettings &settings, const CppTexts *texts) {
  CppUnit unit;
  std::string absolute = fs::absolute(main.path).lexically_normal().string();
  CompileSetup setup = compile_setup_for(main.path, settings.build_dir, trusted_roots(settings),
                                         settings.build_dir_confined_to, settings.build_dir_source);
  bool defaults = !setup.from_database;
  std::vector<std::string> args = arguments_for(main.path, setup, settings);
  for (const std::string &warning : setup.warnings)
    unit.diagnostics.push_back({Severity::Warning, main.display_path, 0, 0, warning});
  std::map<std::string, std::string> files{{absolute, main.text}};
  if (texts)
    for (const auto &[path, text] : *texts)
      if (is_cpp_header_path(path))
        files.emplace(fs::absolute(path).lexically_normal().string(), text);
  // The precompiled LibTorch header of the file's flags: the defaults' one (the project's
  // include/ folders do not change what torch/torch.h means), or the one of the database entry's
  // flags, which it must be built with.
  std::string pch_error;
  std::set<std::string> seen{absolute};
  if ((!defaults || !libtorch_includes(settings).empty()) &&
      includes_torch(main.text, fs::path(absolute).parent_path(), quoted_include_dirs(args), files,
                     seen)) {
    std::string pch = build_pch(settings, defaults ? base_arguments(settings) : args, pch_error);
    if (!pch.empty()) {
      args.push_back("-include-pch");
      args.push_back(pch);
    }
  }
  args.push_back(absolute);

  // Project files: those under the main file's directory tree or named by the caller; LibTorch
  // and the system are context.
  std::vector<std::string> foreign_roots = libtorch_includes(settings);
  foreign_roots.push_back("/usr/");
  auto is_project_file = [&](const std::string &path) {
    for (const std::string &root : foreign_roots)
      if (path.rfind(root, 0) == 0)
        return false;
    return true;
  };
  CollectingDiagnostics diags;
  const SourceFile *main_file = &main;
  // Crash recovery also catches a crash in our own lowering, which runs inside Clang's action:
  // that one is devlint's defect, not Clang's, and is named so (the C++ fuzz target fails on it).
  bool lowering = false;
  auto done = [&](clang::ASTContext &ctx) {
    lowering = true;
    Lowerer lowerer(ctx, unit, *main_file, is_project_file);
    lowerer.run();
    lowering = false;
  };
  auto confined =
      llvm::makeIntrusiveRefCnt<ConfinedFileSystem>(llvm::vfs::getRealFileSystem(), setup.roots);
  if (run_tool(args, std::make_unique<LowerAction>(done), files, diags, confined) ==
      ToolRun::Crashed) {
    // What the lowering made before the crash is incomplete: nothing of it is reported.
    CppUnit crashed;
    crashed.diagnostics.push_back(
        {Severity::Error, main.display_path, 0, 0,
         lowering ? std::string(kLoweringCrashMessage)
                  : "Clang crashed while parsing this file (a compiler defect on malformed "
                    "code); not analyzed"});
    return crashed;
  }
  if (unit.syntax.empty()) {
    auto syntax = std::make_unique<SyntaxFile>();
    syntax->source = &main;
    syntax->explicit_placement = true;
    unit.syntax.push_back(std::move(syntax));
  }
  for (auto &header : unit.headers) {
    // Headers are reported by the path the user would write: relative to the main file's
    // directory when below it.
    std::error_code ec;
    fs::path rel = fs::relative(header->path, fs::current_path(ec), ec);
    if (!ec && !rel.empty() && rel.string().rfind("..", 0) != 0)
      header->display_path = rel.string();
  }
  if (const char *dump = std::getenv("DEVLINT_DUMP_CPP"); dump && *dump == '1')
    dump_unit(unit, std::cerr);
  if (!pch_error.empty())
    unit.diagnostics.push_back({Severity::Warning, main.display_path, 0, 0, pch_error});
  std::vector<const CollectingDiagnostics::Error *> missing;
  for (const auto &e : diags.errors)
    if (e.missing_header)
      missing.push_back(&e);
  std::vector<std::string> refused = confined->refused();
  auto refused_header = [&](const CollectingDiagnostics::Error &e) {
    std::string name = fs::path(e.header).filename().string();
    return !name.empty() && std::any_of(refused.begin(), refused.end(), [&](const std::string &r) {
      return fs::path(r).filename() == name;
    });
  };
  auto refusal = std::find_if(diags.errors.begin(), diags.errors.end(), refused_header);
  if (refusal != diags.errors.end()) {
    const auto &e = *refusal;
    unit.diagnostics.push_back(
        {Severity::Error, main.display_path, e.line, e.column,
         "'" + printable_text(e.header, 200) +
             "' not opened: devlint lets Clang read only files under the checkout (" +
             printable_text(setup.checkout, 200) +
             "), LibTorch's and the system's include directories"});
  } else if (!missing.empty()) {
    const auto &e = *missing.front();
    // LibTorch is blamed only for its own headers, and only when it was not found.
    bool torch_header = e.header.rfind("torch/", 0) == 0 || e.header.rfind("ATen/", 0) == 0 ||
                        e.header.rfind("c10/", 0) == 0;
    bool torch = torch_header && libtorch_includes(settings).empty();
    std::string message =
        e.message + (torch ? "; LibTorch's headers were not found: pass "
                             "`--libtorch DIR` (or set `libtorch` in the "
                             "configuration) or `-p BUILD_DIR` with a "
                             "compile_commands.json"
                           : "; the analysis of this file is partial (Clang stops at the missing "
                             "header): pass the include paths with `-p BUILD_DIR` (a "
                             "compile_commands.json)");
    unit.diagnostics.push_back({Severity::Error, main.display_path, e.line, e.column, message});
  } else if (!diags.errors.empty()) {
    const auto &e = diags.errors.front();
    std::string where = fs::path(e.file).filename().string() + ":" + std::to_string(e.line);
    // Clang reads nothing outside the roots; should an error still point outside them, its
    // text (which may quote the file) is not shown.
    std::string what = e.message;
    std::error_code ec;
    if (!e.file.empty() && e.file[0] == '/' && fs::exists(e.file, ec) &&
        !ConfinedFileSystem::allowed(e.file, setup.roots))
      what = "an error in a file outside the checkout";
    unit.diagnostics.push_back({Severity::Warning, main.display_path, 0, 0,
                                "does not compile (" + std::to_string(diags.errors.size()) +
                                    " error(s), first at " + where + ": " + what +
                                    "); analyzed what Clang recovered"});
  }
  return unit;
}

} // namespace devlint