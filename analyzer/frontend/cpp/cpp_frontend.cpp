#include "frontend/cpp/cpp_frontend.h"
#include "frontend/cpp/compile_database.h"
#include "frontend/cpp/confined_file_system.h"
#include "model/file_input.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <unistd.h>

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticLex.h>
#include <clang/Basic/FileManager.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Basic/Stack.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Lex/Lexer.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/thread.h>

#include "model/private_files.h"

namespace devlint {
namespace fs = std::filesystem;

bool cpp_frontend_available() { return true; }

namespace {

bool has_extension(const std::string &path, std::initializer_list<const char *> extensions) {
  std::string ext = fs::path(path).extension().string();
  for (const char *e : extensions)
    if (ext == e)
      return true;
  return false;
}

// ---- types ----

std::string qualified_name(const clang::NamedDecl *d) {
  return d ? d->getQualifiedNameAsString() : std::string();
}

// Types can be null in code Clang recovered from errors: every helper below accepts that.
const clang::CXXRecordDecl *record_of(clang::QualType type) {
  if (type.isNull())
    return nullptr;
  type = type.getNonReferenceType().getCanonicalType();
  if (const auto *p = type->getAs<clang::PointerType>())
    type = p->getPointeeType().getCanonicalType();
  const clang::CXXRecordDecl *r = type->getAsCXXRecordDecl();
  return r ? r->getDefinition() ? r->getDefinition() : r : nullptr;
}

bool is_record(clang::QualType type, std::string_view name) {
  const clang::CXXRecordDecl *r = record_of(type);
  return r && qualified_name(r) == name;
}

// Tensor methods are TensorBase's: a call's object is often converted to it.
bool is_tensor_type(clang::QualType t) {
  return is_record(t, "at::Tensor") || is_record(t, "at::TensorBase");
}
bool is_device_type(clang::QualType t) {
  if (t.isNull())
    return false;
  return is_record(t, "c10::Device") ||
         qualified_name(t.getNonReferenceType()->getAsTagDecl()) == "c10::DeviceType";
}
bool is_options_type(clang::QualType t) { return is_record(t, "c10::TensorOptions"); }

bool derives_from(const clang::CXXRecordDecl *r, std::string_view base, int depth = 0) {
  if (!r || depth > 16)
    return false;
  if (qualified_name(r) == base)
    return true;
  if (!r->hasDefinition())
    return false;
  for (const clang::CXXBaseSpecifier &b : r->getDefinition()->bases())
    if (derives_from(record_of(b.getType()), base, depth + 1))
      return true;
  return false;
}

// The module class a value of `type` holds: NetImpl for `Net` (TORCH_MODULE's holder),
// `std::shared_ptr<NetImpl>`, `NetImpl&`; torch::jit::Module itself. Each record is looked at
// once: a class can hold itself (`class Loop : ModuleHolder<Loop>`), which is a cycle.
const clang::CXXRecordDecl *module_class_of(clang::QualType type,
                                            std::set<const clang::CXXRecordDecl *> &seen) {
  const clang::CXXRecordDecl *r = record_of(type);
  for (int depth = 0; r && depth < 4 && seen.insert(r).second; ++depth) {
    if (derives_from(r, "torch::nn::Module") || derives_from(r, "torch::jit::Module"))
      return r;
    const auto *spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(r);
    const clang::CXXRecordDecl *next = nullptr;
    if (spec &&
        (qualified_name(spec) == "torch::nn::ModuleHolder" ||
         qualified_name(spec) == "std::shared_ptr") &&
        spec->getTemplateArgs().size() > 0 &&
        spec->getTemplateArgs()[0].getKind() == clang::TemplateArgument::Type)
      next = record_of(spec->getTemplateArgs()[0].getAsType());
    if (!next && r->hasDefinition())
      for (const clang::CXXBaseSpecifier &b : r->bases()) {
        const auto *base = record_of(b.getType());
        if (base && qualified_name(base) == "torch::nn::ModuleHolder")
          next = module_class_of(b.getType(), seen);
      }
    r = next;
  }
  return nullptr;
}

const clang::CXXRecordDecl *module_class_of(clang::QualType type) {
  std::set<const clang::CXXRecordDecl *> seen;
  return module_class_of(type, seen);
}

bool in_namespace(const clang::Decl *d, std::initializer_list<const char *> roots) {
  std::string q = qualified_name(llvm::dyn_cast_or_null<clang::NamedDecl>(d));
  for (const char *root : roots)
    if (q.rfind(std::string(root) + "::", 0) == 0)
      return true;
  return false;
}

std::string device_type_name(std::string_view enumerator) {
  std::string out;
  for (char c : enumerator)
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (out.size() > 1 && out[0] == 'k')
    out = out.substr(1); // kCUDA -> cuda
  return out;
}

// ---- lowering ----

struct FileOut {
  SourceFile *source = nullptr;
  SyntaxFile *syntax = nullptr;
};

class Lowerer {
public:
  Lowerer(clang::ASTContext &ctx, CppUnit &unit, const SourceFile &main,
          std::function<bool(const std::string &)> is_project_file)
      : ctx_(ctx), sm_(ctx.getSourceManager()), unit_(unit), main_(main),
        is_project_file_(std::move(is_project_file)) {}

  void run() {
    // The main file first, so syntax[0] is always it.
    out_for(sm_.getMainFileID());
    collect(ctx_.getTranslationUnitDecl());
    for (const clang::CXXRecordDecl *r : records_)
      lower_class(r);
    for (const clang::FunctionDecl *f : functions_)
      lower_function_definition(f);
  }

private:
  clang::ASTContext &ctx_;
  clang::SourceManager &sm_;
  CppUnit &unit_;
  const SourceFile &main_;
  std::function<bool(const std::string &)> is_project_file_;
  std::map<clang::FileID, FileOut> files_;
  std::set<clang::FileID> foreign_;
  std::vector<const clang::CXXRecordDecl *> records_;
  std::vector<const clang::FunctionDecl *> functions_;
  std::map<const clang::CXXRecordDecl *, ClassDef *> classes_;
  // The function being lowered: its file and the range that stands in for nodes spelled
  // elsewhere (in a macro from another file).
  FileOut *current_ = nullptr;
  SourceRange fallback_;

  static constexpr std::string_view kSelf = "self";

  FileOut *out_for(clang::FileID fid) {
    if (fid.isInvalid() || foreign_.count(fid))
      return nullptr;
    auto it = files_.find(fid);
    if (it != files_.end())
      return &it->second;
    FileOut out;
    if (fid == sm_.getMainFileID()) {
      out.source = const_cast<SourceFile *>(&main_);
    } else {
      const clang::FileEntry *entry = sm_.getFileEntryForID(fid);
      if (!entry) {
        foreign_.insert(fid);
        return nullptr;
      }
      std::string path = fs::absolute(entry->getName().str()).lexically_normal().string();
      if (!is_project_file_(path) || sm_.isInSystemHeader(sm_.getLocForStartOfFile(fid))) {
        foreign_.insert(fid);
        return nullptr;
      }
      for (auto &[other, existing] : files_)
        if (existing.source->path == path) // the same header through another include
          return &existing;
      auto source = std::make_unique<SourceFile>();
      source->language = Language::Cpp;
      source->path = path;
      source->display_path = path;
      source->text = sm_.getBufferData(fid).str();
      source->index_lines();
      out.source = source.get();
      unit_.headers.push_back(std::move(source));
    }
    auto syntax = std::make_unique<SyntaxFile>();
    syntax->source = out.source;
    syntax->explicit_placement = true;
    out.syntax = syntax.get();
    unit_.syntax.push_back(std::move(syntax));
    return &files_.emplace(fid, out).first->second;
  }

  FileOut *out_for(clang::SourceLocation loc) {
    if (loc.isInvalid())
      return nullptr;
    return out_for(sm_.getFileID(sm_.getExpansionLoc(loc)));
  }

  // ---- ranges ----

  SourceRange make_range(const SourceFile &file, uint32_t begin, uint32_t end) const {
    SourceRange r;
    r.begin = begin;
    r.end = std::max(begin, end);
    auto position = [&](uint32_t offset, uint32_t &line, uint32_t &column) {
      auto it = std::upper_bound(file.line_starts.begin(), file.line_starts.end(), offset);
      size_t index = it == file.line_starts.begin() ? 0 : (it - file.line_starts.begin()) - 1;
      line = static_cast<uint32_t>(index + 1);
      column = offset - (file.line_starts.empty() ? 0 : file.line_starts[index]) + 1;
    };
    position(r.begin, r.line, r.column);
    position(r.end, r.end_line, r.end_column);
    return r;
  }

  SourceRange range_of(clang::SourceRange source_range) {
    if (!current_)
      return fallback_;
    clang::CharSourceRange expansion = sm_.getExpansionRange(source_range);
    clang::SourceLocation b = expansion.getBegin(), e = expansion.getEnd();
    if (b.isInvalid() || e.isInvalid())
      return fallback_;
    auto [bfid, boff] = sm_.getDecomposedLoc(b);
    auto [efid, eoff] = sm_.getDecomposedLoc(e);
    if (bfid != efid || !files_.count(bfid) || &files_[bfid] != current_)
      return fallback_;
    unsigned length =
        expansion.isTokenRange() ? clang::Lexer::MeasureTokenLength(e, sm_, ctx_.getLangOpts()) : 0;
    return make_range(*current_->source, boff, eoff + length);
  }

  template <class Node> SourceRange range_of(const Node *node) {
    return range_of(node->getSourceRange());
  }

  // ---- nodes ----

  Expr *make(ExprKind kind, SourceRange range, std::string_view text = {}) {
    Expr *e = current_->syntax->make<Expr>();
    e->kind = kind;
    e->range = range;
    e->text = text;
    return e;
  }
  std::string_view intern(std::string s) { return current_->syntax->intern(std::move(s)); }
  Expr *name(SourceRange range, std::string_view text) { return make(ExprKind::Name, range, text); }
  Expr *attribute(Expr *object, std::string_view attr, SourceRange range) {
    Expr *e = make(ExprKind::Attribute, range, attr);
    e->operands.push_back(object);
    return e;
  }
  // `torch.nn.functional.cross_entropy` as a Name/Attribute chain spanning `range`.
  Expr *dotted(const std::string &path, SourceRange range) {
    Expr *e = nullptr;
    size_t pos = 0;
    while (pos <= path.size()) {
      size_t dot = path.find('.', pos);
      std::string_view part = intern(path.substr(pos, dot == std::string::npos ? dot : dot - pos));
      e = e ? attribute(e, part, range) : name(range, part);
      if (dot == std::string::npos)
        break;
      pos = dot + 1;
    }
    return e;
  }
  Expr *call(Expr *callee, SourceRange range) {
    Expr *e = make(ExprKind::Call, range);
    e->operands.push_back(callee);
    e->text = callee->kind == ExprKind::Attribute || callee->kind == ExprKind::Name
                  ? callee->text
                  : std::string_view{};
    return e;
  }
  Expr *string_literal(SourceRange range, std::string text) {
    return make(ExprKind::String, range, intern(std::move(text)));
  }
  Stmt *stmt(StmtKind kind, SourceRange range) {
    Stmt *s = current_->syntax->make<Stmt>();
    s->kind = kind;
    s->range = range;
    return s;
  }

  // ---- declarations ----

  bool in_project(const clang::Decl *d) {
    clang::SourceLocation loc = d->getLocation();
    if (loc.isInvalid() || sm_.isInSystemHeader(loc))
      return false;
    return out_for(loc) != nullptr;
  }

  void collect(const clang::DeclContext *dc) {
    for (const clang::Decl *d : dc->decls()) {
      if (const auto *ns = llvm::dyn_cast<clang::NamespaceDecl>(d)) {
        collect(ns);
      } else if (const auto *ls = llvm::dyn_cast<clang::LinkageSpecDecl>(d)) {
        collect(ls);
      } else if (const auto *r = llvm::dyn_cast<clang::CXXRecordDecl>(d)) {
        if (r->isThisDeclarationADefinition() && !r->getDescribedClassTemplate() && in_project(r) &&
            derives_from(r, "torch::nn::Module"))
          records_.push_back(r);
        if (r->isThisDeclarationADefinition() && in_project(r))
          collect(r); // nested classes
      } else if (const auto *f = llvm::dyn_cast<clang::FunctionDecl>(d)) {
        if (f->doesThisDeclarationHaveABody() && !f->isDependentContext() && in_project(f) &&
            !llvm::isa<clang::CXXMethodDecl>(f))
          functions_.push_back(f);
        else if (const auto *m = llvm::dyn_cast<clang::CXXMethodDecl>(f))
          if (m->doesThisDeclarationHaveABody() && m->isOutOfLine() && in_project(m))
            functions_.push_back(m);
      } else if (const auto *t = llvm::dyn_cast<clang::FunctionTemplateDecl>(d)) {
        (void)t; // templates have no types to reason with until instantiated
      }
    }
  }

  Expr *base_expr(const clang::CXXBaseSpecifier &b, SourceRange range) {
    const clang::CXXRecordDecl *r = record_of(b.getType());
    if (!r)
      return name(range, intern(b.getType().getAsString()));
    std::string q = qualified_name(r);
    if (q.rfind("torch::nn::", 0) == 0) {
      std::string leaf = r->getNameAsString();
      if (leaf.size() > 4 && leaf.compare(leaf.size() - 4, 4, "Impl") == 0)
        leaf = leaf.substr(0, leaf.size() - 4);
      return dotted("torch.nn." + leaf, range);
    }
    return name(range, intern(r->getNameAsString()));
  }

  void lower_class(const clang::CXXRecordDecl *r) {
    FileOut *file = out_for(r->getLocation());
    if (!file)
      return;
    current_ = file;
    fallback_ = range_of(r);
    ClassDef *cls = file->syntax->make<ClassDef>();
    cls->name = intern(r->getNameAsString());
    cls->range = fallback_;
    classes_[r] = cls;
    for (const clang::CXXBaseSpecifier &b : r->bases())
      cls->bases.push_back(base_expr(b, range_of(b.getSourceRange())));
    // In-class member initializers run in every constructor: they open __init__.
    std::vector<Stmt *> member_inits;
    for (const clang::FieldDecl *field : r->fields())
      if (const clang::Expr *init = field->getInClassInitializer())
        if (Stmt *s = member_assignment(field, init, range_of(field)))
          member_inits.push_back(s);
    bool has_constructor = false;
    for (const clang::CXXMethodDecl *m : r->methods()) {
      if (m->isImplicit() || !m->doesThisDeclarationHaveABody() || m->isOutOfLine())
        continue;
      const auto *ctor = llvm::dyn_cast<clang::CXXConstructorDecl>(m);
      if (ctor && (ctor->isCopyOrMoveConstructor()))
        continue;
      FunctionDef *fn = lower_method(m, cls, file, ctor ? &member_inits : nullptr);
      has_constructor |= ctor != nullptr;
      cls->methods.push_back(fn);
    }
    if (!has_constructor && !member_inits.empty()) {
      FunctionDef *init = file->syntax->make<FunctionDef>();
      init->name = "__init__";
      init->range = cls->range;
      init->name_range = cls->range;
      Parameter self;
      self.name = kSelf;
      self.range = cls->range;
      init->parameters.push_back(self);
      init->body = member_inits;
      cls->methods.push_back(init);
    }
    for (FunctionDef *fn : cls->methods) {
      Stmt *def = stmt(StmtKind::FunctionDef, fn->range);
      def->function = fn;
      cls->body.push_back(def);
    }
    Stmt *def = stmt(StmtKind::ClassDef, cls->range);
    def->class_def = cls;
    file->syntax->body.push_back(def);
    file->syntax->classes.push_back(cls);
    current_ = nullptr;
  }

  // `fc = register_module("fc", Linear(...))`, `w = register_parameter("w", ...)`: the member
  // holds what was registered.
  Stmt *member_assignment(const clang::FieldDecl *field, const clang::Expr *init,
                          SourceRange range) {
    SourceRange saved = fallback_;
    fallback_ = range;
    Expr *target = attribute(name(range_of(field->getLocation()), kSelf),
                             intern(field->getNameAsString()), range_of(field->getLocation()));
    Stmt *s = assignment(target, init, range);
    fallback_ = saved;
    return s;
  }

  Stmt *assignment(Expr *target, const clang::Expr *value, SourceRange range) {
    value = strip(value);
    if (!value || llvm::isa<clang::CXXNullPtrLiteralExpr>(value))
      return nullptr;
    // A holder built from nullptr (`Linear fc{nullptr}`) holds nothing yet.
    if (const auto *construct = llvm::dyn_cast<clang::CXXConstructExpr>(value))
      if (construct->getNumArgs() == 1 &&
          llvm::isa<clang::CXXNullPtrLiteralExpr>(strip(construct->getArg(0))))
        return nullptr;
    Expr *lowered = lower(value);
    if (lowered->kind == ExprKind::Call && lowered->operands.size() > 2 &&
        lowered->operands[0]->kind == ExprKind::Attribute &&
        is_name(lowered->operands[0]->operands[0], "self")) {
      std::string_view method = lowered->text;
      if (method == "register_module") {
        lowered = lowered->operands[2];
      } else if (method == "register_parameter") {
        Expr *param = call(dotted("torch.nn.Parameter", lowered->range), lowered->range);
        param->operands.push_back(lowered->operands[2]);
        lowered = param;
      } else if (method == "register_buffer" && target->kind == ExprKind::Attribute) {
        // Registered under the member's name, which is how the methods read it.
        lowered->operands[1] =
            string_literal(lowered->operands[1]->range, std::string(target->text));
        Stmt *s = stmt(StmtKind::Expr, range);
        s->value = lowered;
        return s;
      }
    }
    Stmt *s = stmt(StmtKind::Assign, range);
    s->targets.push_back(target);
    s->value = lowered;
    return s;
  }

  void add_parameters(FunctionDef *fn, const clang::FunctionDecl *f) {
    for (const clang::ParmVarDecl *p : f->parameters()) {
      Parameter param;
      param.name = intern(p->getNameAsString());
      param.range = range_of(p);
      param.annotation =
          intern(is_tensor_type(p->getType()) ? "torch.Tensor"
                                              : p->getType().getNonReferenceType().getAsString());
      if (p->hasDefaultArg() && !p->hasUninstantiatedDefaultArg() && p->getDefaultArg())
        param.default_value = lower(p->getDefaultArg());
      fn->parameters.push_back(param);
    }
  }

  FunctionDef *lower_method(const clang::CXXMethodDecl *m, ClassDef *cls, FileOut *file,
                            const std::vector<Stmt *> *member_inits) {
    FileOut *saved = current_;
    current_ = file;
    SourceRange saved_fallback = fallback_;
    fallback_ = range_of(m);
    FunctionDef *fn = file->syntax->make<FunctionDef>();
    const auto *ctor = llvm::dyn_cast<clang::CXXConstructorDecl>(m);
    fn->name = ctor ? std::string_view("__init__") : intern(m->getNameAsString());
    fn->range = fallback_;
    fn->name_range = range_of(m->getLocation());
    fn->is_staticmethod = m->isStatic();
    if (!m->isStatic()) {
      Parameter self;
      self.name = kSelf;
      self.range = fn->name_range;
      fn->parameters.push_back(self);
    }
    add_parameters(fn, m);
    if (member_inits)
      fn->body = *member_inits;
    if (ctor)
      for (const clang::CXXCtorInitializer *init : ctor->inits())
        if (init->isWritten() && init->getMember())
          if (Stmt *s = member_assignment(init->getMember(), init->getInit(),
                                          range_of(init->getSourceRange())))
            fn->body.push_back(s);
    if (m->getBody())
      lower_block(m->getBody(), fn->body);
    fallback_ = saved_fallback;
    current_ = saved;
    return fn;
  }

  void lower_function_definition(const clang::FunctionDecl *f) {
    FileOut *file = out_for(f->getLocation());
    if (!file)
      return;
    if (const auto *m = llvm::dyn_cast<clang::CXXMethodDecl>(f)) {
      // A method defined out of line joins its class (declared in this file or a header).
      auto it = classes_.find(m->getParent()->getDefinition());
      if (it == classes_.end())
        return;
      const auto *ctor = llvm::dyn_cast<clang::CXXConstructorDecl>(m);
      if (ctor && ctor->isCopyOrMoveConstructor())
        return;
      FunctionDef *fn = lower_method(m, it->second, file, nullptr);
      fn->body_file = file->syntax;
      it->second->methods.push_back(fn);
      return;
    }
    current_ = file;
    fallback_ = range_of(f);
    FunctionDef *fn = file->syntax->make<FunctionDef>();
    fn->name = intern(f->getNameAsString());
    fn->range = fallback_;
    fn->name_range = range_of(f->getLocation());
    fn->runs_as_script = true;
    add_parameters(fn, f);
    lower_block(f->getBody(), fn->body);
    Stmt *def = stmt(StmtKind::FunctionDef, fn->range);
    def->function = fn;
    file->syntax->body.push_back(def);
    file->syntax->functions.push_back(fn);
    current_ = nullptr;
  }

  // ---- statements ----

  void lower_block(const clang::Stmt *s, std::vector<Stmt *> &out) {
    if (!s)
      return;
    if (const auto *compound = llvm::dyn_cast<clang::CompoundStmt>(s)) {
      for (const clang::Stmt *child : compound->body())
        lower_stmt(child, out);
      return;
    }
    lower_stmt(s, out);
  }

  void lower_stmt(const clang::Stmt *s, std::vector<Stmt *> &out) {
    if (!s)
      return;
    SourceRange range = range_of(s);
    SourceRange saved = fallback_;
    fallback_ = range;
    lower_stmt_at(s, range, out);
    fallback_ = saved;
  }

  void lower_stmt_at(const clang::Stmt *s, SourceRange range, std::vector<Stmt *> &out) {
    if (llvm::isa<clang::CompoundStmt>(s)) {
      lower_block(s, out);
    } else if (const auto *decl = llvm::dyn_cast<clang::DeclStmt>(s)) {
      for (const clang::Decl *d : decl->decls()) {
        const auto *var = llvm::dyn_cast<clang::VarDecl>(d);
        if (!var || !var->hasInit())
          continue;
        Expr *target = name(range_of(var->getLocation()), intern(var->getNameAsString()));
        if (Stmt *a = assignment(target, var->getInit(), range))
          out.push_back(a);
      }
    } else if (const auto *ret = llvm::dyn_cast<clang::ReturnStmt>(s)) {
      Stmt *r = stmt(StmtKind::Return, range);
      if (ret->getRetValue())
        r->value = lower(ret->getRetValue());
      out.push_back(r);
    } else if (const auto *if_stmt = llvm::dyn_cast<clang::IfStmt>(s)) {
      if (if_stmt->getInit())
        lower_stmt(if_stmt->getInit(), out);
      if (const clang::DeclStmt *cond_var = if_stmt->getConditionVariableDeclStmt())
        lower_stmt(cond_var, out);
      Stmt *st = stmt(StmtKind::If, range);
      st->value = lower(if_stmt->getCond());
      lower_block(if_stmt->getThen(), st->body);
      lower_block(if_stmt->getElse(), st->orelse);
      out.push_back(st);
    } else if (const auto *for_stmt = llvm::dyn_cast<clang::ForStmt>(s)) {
      lower_stmt(for_stmt->getInit(), out);
      Stmt *st = stmt(StmtKind::While, range);
      st->value = for_stmt->getCond() ? lower(for_stmt->getCond()) : nullptr;
      lower_block(for_stmt->getBody(), st->body);
      if (for_stmt->getInc())
        lower_stmt(for_stmt->getInc(), st->body);
      out.push_back(st);
    } else if (const auto *range_for = llvm::dyn_cast<clang::CXXForRangeStmt>(s)) {
      Stmt *st = stmt(StmtKind::For, range);
      const clang::VarDecl *var = range_for->getLoopVariable();
      st->targets.push_back(name(range_of(var->getLocation()), intern(var->getNameAsString())));
      st->value = lower(range_for->getRangeInit());
      lower_block(range_for->getBody(), st->body);
      out.push_back(st);
    } else if (const auto *while_stmt = llvm::dyn_cast<clang::WhileStmt>(s)) {
      Stmt *st = stmt(StmtKind::While, range);
      st->value = lower(while_stmt->getCond());
      lower_block(while_stmt->getBody(), st->body);
      out.push_back(st);
    } else if (const auto *do_stmt = llvm::dyn_cast<clang::DoStmt>(s)) {
      Stmt *st = stmt(StmtKind::While, range);
      st->value = lower(do_stmt->getCond());
      lower_block(do_stmt->getBody(), st->body);
      out.push_back(st);
    } else if (const auto *try_stmt = llvm::dyn_cast<clang::CXXTryStmt>(s)) {
      Stmt *st = stmt(StmtKind::Try, range);
      lower_block(try_stmt->getTryBlock(), st->body);
      for (unsigned i = 0; i < try_stmt->getNumHandlers(); ++i) {
        st->handlers.emplace_back();
        lower_block(try_stmt->getHandler(i)->getHandlerBlock(), st->handlers.back());
      }
      out.push_back(st);
    } else if (const auto *e = llvm::dyn_cast<clang::Expr>(s)) {
      out.push_back(expression_statement(e, range));
    } else if (const auto *sw = llvm::dyn_cast<clang::SwitchStmt>(s)) {
      Stmt *st = stmt(StmtKind::If, range);
      st->value = lower(sw->getCond());
      lower_block(sw->getBody(), st->body);
      out.push_back(st);
    } else if (const auto *labeled = llvm::dyn_cast<clang::SwitchCase>(s)) {
      lower_stmt(labeled->getSubStmt(), out);
    } else {
      out.push_back(stmt(StmtKind::Other, range));
    }
  }

  static std::string_view assignment_operator(const clang::Expr *e, const clang::Expr *&lhs,
                                              const clang::Expr *&rhs) {
    if (const auto *op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e)) {
      if (op->getNumArgs() != 2)
        return {};
      lhs = op->getArg(0);
      rhs = op->getArg(1);
      switch (op->getOperator()) {
      case clang::OO_Equal:
        return "=";
      case clang::OO_PlusEqual:
        return "+";
      case clang::OO_MinusEqual:
        return "-";
      case clang::OO_StarEqual:
        return "*";
      case clang::OO_SlashEqual:
        return "/";
      default:
        return {};
      }
    }
    if (const auto *op = llvm::dyn_cast<clang::BinaryOperator>(e)) {
      lhs = op->getLHS();
      rhs = op->getRHS();
      if (op->getOpcode() == clang::BO_Assign)
        return "=";
      if (op->isCompoundAssignmentOp()) {
        std::string_view spelled = clang::BinaryOperator::getOpcodeStr(op->getOpcode());
        return spelled.substr(0, spelled.size() - 1);
      }
    }
    return {};
  }

  Stmt *expression_statement(const clang::Expr *e, SourceRange range) {
    e = strip(e);
    const clang::Expr *lhs = nullptr, *rhs = nullptr;
    std::string_view op = assignment_operator(e, lhs, rhs);
    if (op == "=") {
      if (Stmt *s = assignment(lower(lhs), rhs, range))
        return s;
      return stmt(StmtKind::Other, range);
    }
    if (!op.empty()) {
      Stmt *s = stmt(StmtKind::AugAssign, range);
      s->targets.push_back(lower(lhs));
      s->value = lower(rhs);
      s->text = op;
      return s;
    }
    // `model->to(device);` moves the module in place: the name now holds a placed module.
    if (const auto *member = llvm::dyn_cast<clang::CXXMemberCallExpr>(e)) {
      const clang::CXXMethodDecl *method = member->getMethodDecl();
      if (method && method->getName() == "to" && module_class_of(member->getObjectType())) {
        Expr *moved = lower(e);
        if (moved->kind == ExprKind::Call && moved->operands[0]->kind == ExprKind::Attribute) {
          const Expr *object = moved->operands[0]->operands[0];
          if (object->kind == ExprKind::Name || object->kind == ExprKind::Attribute) {
            Stmt *s = stmt(StmtKind::Assign, range);
            s->targets.push_back(const_cast<Expr *>(object));
            s->value = moved;
            return s;
          }
        }
      }
    }
    Stmt *s = stmt(StmtKind::Expr, range);
    s->value = lower(e);
    return s;
  }

  // ---- expressions ----

  static const clang::Expr *strip(const clang::Expr *e) {
    for (int guard = 0; e && guard < 32; ++guard) {
      const clang::Expr *next = e->IgnoreUnlessSpelledInSource();
      if (const auto *cleanups = llvm::dyn_cast<clang::ExprWithCleanups>(next))
        next = cleanups->getSubExpr();
      if (const auto *temp = llvm::dyn_cast<clang::MaterializeTemporaryExpr>(next))
        next = temp->getSubExpr();
      if (const auto *bind = llvm::dyn_cast<clang::CXXBindTemporaryExpr>(next))
        next = bind->getSubExpr();
      if (const auto *cast = llvm::dyn_cast<clang::ImplicitCastExpr>(next))
        next = cast->getSubExpr();
      // A converting constructor the source does not spell (Tensor -> IValue, holder copies).
      if (const auto *construct = llvm::dyn_cast<clang::CXXConstructExpr>(next))
        if (!llvm::isa<clang::CXXTemporaryObjectExpr>(construct) && construct->getNumArgs() == 1 &&
            (construct->getParenOrBraceRange().isInvalid() ||
             construct->getConstructor()->isCopyOrMoveConstructor()) &&
            !llvm::isa<clang::CXXDefaultArgExpr>(construct->getArg(0)))
          next = construct->getArg(0);
      if (const auto *functional = llvm::dyn_cast<clang::CXXFunctionalCastExpr>(next))
        next = functional->getSubExpr();
      if (next == e)
        return e;
      e = next;
    }
    return e;
  }

  // What a device expression says when it is a literal: "cuda", "cuda:1", "cpu".
  std::optional<std::string> device_literal(const clang::Expr *e) {
    e = strip(e);
    if (!e)
      return std::nullopt;
    if (const auto *ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
      const clang::ValueDecl *d = ref->getDecl();
      if (llvm::isa<clang::EnumConstantDecl>(d) && in_namespace(d, {"c10", "at", "torch"}))
        return device_type_name(d->getName().str());
      if (const auto *var = llvm::dyn_cast<clang::VarDecl>(d))
        if (var->getType().isConstQualified() && var->hasGlobalStorage() &&
            in_namespace(var, {"c10", "at", "torch"}) &&
            qualified_name(var->getType()->getAsTagDecl()) == "c10::DeviceType")
          return device_type_name(var->getName().str());
      return std::nullopt;
    }
    if (const auto *str = llvm::dyn_cast<clang::StringLiteral>(e))
      return str->getString().str();
    std::vector<const clang::Expr *> args;
    if (const auto *construct = llvm::dyn_cast<clang::CXXConstructExpr>(e)) {
      if (!is_device_type(construct->getType()))
        return std::nullopt;
      for (const clang::Expr *a : construct->arguments())
        if (!llvm::isa<clang::CXXDefaultArgExpr>(a))
          args.push_back(a);
    } else if (const auto *list = llvm::dyn_cast<clang::InitListExpr>(e)) {
      if (!is_device_type(list->getType()))
        return std::nullopt;
      for (const clang::Expr *a : list->inits())
        args.push_back(a);
    } else {
      return std::nullopt;
    }
    return device_from_arguments(args);
  }

  // Device(type), Device(type, index), Device("cuda:1").
  std::optional<std::string> device_from_arguments(const std::vector<const clang::Expr *> &args) {
    if (args.empty() || args.size() > 2)
      return std::nullopt;
    std::optional<std::string> type = device_literal(args[0]);
    if (!type || args.size() == 1)
      return type;
    clang::Expr::EvalResult index;
    if (!strip(args[1])->EvaluateAsInt(index, ctx_))
      return std::nullopt;
    int64_t value = index.Val.getInt().getExtValue();
    return value < 0 ? *type : *type + ":" + std::to_string(value);
  }

  // The device part of a TensorOptions expression: `.device(d)` in a chain, `torch::device(d)`,
  // `x.options()` (x's device), a Device or DeviceType converted to options. Null: no device.
  Expr *options_device(const clang::Expr *e, int depth = 0) {
    e = strip(e);
    if (!e || depth > 16)
      return nullptr;
    if (is_device_type(e->getType()))
      return lower(e);
    if (const auto *member = llvm::dyn_cast<clang::CXXMemberCallExpr>(e)) {
      const clang::CXXMethodDecl *m = member->getMethodDecl();
      std::string method = m ? m->getNameAsString() : std::string();
      if (method == "options" && is_tensor_type(member->getObjectType()))
        return attribute(lower(member->getImplicitObjectArgument()), "device", range_of(e));
      if (method == "device" && member->getNumArgs() >= 1) {
        const clang::Expr *arg = strip(member->getArg(0));
        // device(optional<Device>) wraps its argument once more.
        return lower(arg);
      }
      return options_device(member->getImplicitObjectArgument(), depth + 1);
    }
    if (const auto *c = llvm::dyn_cast<clang::CallExpr>(e)) {
      const clang::FunctionDecl *f = c->getDirectCallee();
      if (f && f->getName() == "device" && c->getNumArgs() == 1)
        return lower(c->getArg(0));
      return nullptr;
    }
    if (const auto *construct = llvm::dyn_cast<clang::CXXConstructExpr>(e)) {
      if (construct->getNumArgs() == 1)
        return options_device(construct->getArg(0), depth + 1);
      // TensorOptions{torch::kCUDA, 1}: its arguments make a Device.
      std::vector<const clang::Expr *> args(construct->arg_begin(), construct->arg_end());
      if (auto device = device_from_arguments(args))
        return string_literal(range_of(e), *device);
      return nullptr;
    }
    if (const auto *list = llvm::dyn_cast<clang::InitListExpr>(e)) {
      std::vector<const clang::Expr *> args(list->inits().begin(), list->inits().end());
      if (auto device = device_from_arguments(args))
        return string_literal(range_of(e), *device);
      return nullptr;
    }
    if (const auto *ref = llvm::dyn_cast<clang::DeclRefExpr>(e))
      if (llvm::isa<clang::VarDecl>(ref->getDecl()) && is_options_type(ref->getType()))
        return lower(e); // a variable: it holds the device its initializer named
    return nullptr;
  }

  // torch:: / at:: functions as the Python names the analysis knows.
  std::string torch_path(const clang::FunctionDecl *f) {
    std::string q = qualified_name(f);
    std::string leaf = f->getNameAsString();
    if (q.rfind("torch::nn::functional::", 0) == 0)
      return "torch.nn.functional." + leaf;
    if (q.rfind("torch::jit::", 0) == 0)
      return "torch.jit." + leaf;
    if (q.rfind("torch::cuda::", 0) == 0)
      return "torch.cuda." + leaf;
    if (q.rfind("at::", 0) == 0 || q.rfind("torch::", 0) == 0 || q.rfind("c10::", 0) == 0)
      return "torch." + leaf;
    return {};
  }

  void add_arguments(Expr *out, const clang::CallExpr *c, bool factory, unsigned first = 0) {
    for (unsigned i = first; i < c->getNumArgs(); ++i) {
      const clang::Expr *arg = c->getArg(i);
      if (llvm::isa<clang::CXXDefaultArgExpr>(arg))
        continue;
      if (factory && is_options_type(arg->getType())) {
        // The device of a factory's options is the analysis' `device=`; the rest (dtype...)
        // stays an argument the fix can extend.
        if (Expr *device = options_device(arg)) {
          out->keywords.push_back({"device", device});
        } else {
          out->keywords.push_back({"options", make(ExprKind::Other, range_of(arg))});
        }
        continue;
      }
      out->operands.push_back(lower(arg));
    }
  }

  Expr *lower_call(const clang::CallExpr *c, SourceRange range) {
    const clang::FunctionDecl *f = c->getDirectCallee();
    if (const auto *member = llvm::dyn_cast<clang::CXXMemberCallExpr>(c)) {
      const clang::CXXMethodDecl *m = member->getMethodDecl();
      const clang::Expr *object = member->getImplicitObjectArgument();
      std::string method = m ? m->getNameAsString() : std::string();
      bool on_module = module_class_of(member->getObjectType()) != nullptr;
      bool implicit_this = object && llvm::isa<clang::CXXThisExpr>(strip(object)) &&
                           llvm::cast<clang::CXXThisExpr>(strip(object))->isImplicit();
      Expr *receiver = object ? lower(object) : name(range, kSelf);
      if (implicit_this)
        receiver->range = range;
      if (on_module && method == "forward") {
        Expr *out = call(receiver, range);
        // A TorchScript module takes its inputs as one list of IValues.
        if (member->getNumArgs() == 1)
          if (const auto *list = llvm::dyn_cast<clang::InitListExpr>(strip(member->getArg(0)))) {
            for (const clang::Expr *element : list->inits())
              out->operands.push_back(lower(element));
            return out;
          }
        add_arguments(out, c, false);
        return out;
      }
      if (is_tensor_type(member->getObjectType())) {
        if (method == "device" && member->getNumArgs() == 0)
          return attribute(receiver, "device", range);
        if (method == "index" && member->getNumArgs() == 1) {
          Expr *sub = make(ExprKind::Subscript, range);
          sub->operands.push_back(receiver);
          // `x.index({i, j})`: the indices of `x[i, j]`, however the braces were converted.
          Expr *indices = lower(member->getArg(0));
          if (indices->kind == ExprKind::Tuple)
            sub->operands.insert(sub->operands.end(), indices->operands.begin(),
                                 indices->operands.end());
          else
            sub->operands.push_back(indices);
          return sub;
        }
      }
      if (method == "push_back" || method == "emplace_back")
        method = "append";
      Expr *out = call(attribute(receiver, intern(method), range_of(member->getCallee())), range);
      add_arguments(out, c, false);
      return out;
    }
    if (const auto *op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(c))
      return lower_operator(op, range);
    if (f) {
      std::string path = torch_path(f);
      if (!path.empty()) {
        std::string leaf = f->getNameAsString();
        if (path == "torch.jit.load" && c->getNumArgs() >= 2 &&
            !llvm::isa<clang::CXXDefaultArgExpr>(c->getArg(1))) {
          // jit::load(path, device) loads and places: `torch.jit.load(path).to(device)`.
          Expr *load = call(dotted(path, range_of(c->getCallee())), range);
          load->operands.push_back(lower(c->getArg(0)));
          Expr *to = call(attribute(load, "to", range), range);
          to->operands.push_back(lower(c->getArg(1)));
          return to;
        }
        Expr *out = call(dotted(path, range_of(c->getCallee())), range);
        add_arguments(out, c, is_tensor_type(c->getType()));
        return out;
      }
      if (f->getName() == "make_shared" || f->getName() == "make_unique") {
        // std::make_shared<NetImpl>(args): constructs NetImpl.
        std::string cls = "object";
        if (const clang::CXXRecordDecl *r = record_of(c->getType())) {
          const auto *spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(r);
          if (spec && spec->getTemplateArgs().size() > 0 &&
              spec->getTemplateArgs()[0].getKind() == clang::TemplateArgument::Type)
            if (const clang::CXXRecordDecl *inner =
                    record_of(spec->getTemplateArgs()[0].getAsType()))
              cls = inner->getNameAsString();
        }
        Expr *out = call(name(range_of(c->getCallee()), intern(cls)), range);
        add_arguments(out, c, false);
        return out;
      }
      Expr *out = call(name(range_of(c->getCallee()), intern(f->getNameAsString())), range);
      add_arguments(out, c, false);
      return out;
    }
    Expr *out = call(lower(c->getCallee()), range);
    add_arguments(out, c, false);
    return out;
  }

  Expr *lower_operator(const clang::CXXOperatorCallExpr *op, SourceRange range) {
    clang::OverloadedOperatorKind kind = op->getOperator();
    auto binary = [&](ExprKind k, std::string_view text) {
      Expr *e = make(k, range, text);
      e->operands.push_back(lower(op->getArg(0)));
      e->operands.push_back(lower(op->getArg(1)));
      return e;
    };
    bool tensors = false;
    for (unsigned i = 0; i < op->getNumArgs(); ++i)
      tensors |= is_tensor_type(op->getArg(i)->getType());
    switch (kind) {
    case clang::OO_Arrow:
    case clang::OO_Star:
      if (op->getNumArgs() == 1)
        return lower(op->getArg(0)); // holder->, *holder: the module itself
      break;
    case clang::OO_Call: {
      // holder(x), loss_fn(x, y), std::function: call the object.
      Expr *out = call(lower(op->getArg(0)), range);
      add_arguments(out, op, false, 1);
      return out;
    }
    case clang::OO_Subscript: {
      Expr *sub = make(ExprKind::Subscript, range);
      sub->operands.push_back(lower(op->getArg(0)));
      sub->operands.push_back(lower(op->getArg(1)));
      return sub;
    }
    default:
      break;
    }
    if (tensors && op->getNumArgs() == 2) {
      switch (kind) {
      case clang::OO_Plus:
        return binary(ExprKind::BinaryOp, "+");
      case clang::OO_Minus:
        return binary(ExprKind::BinaryOp, "-");
      case clang::OO_Star:
        return binary(ExprKind::BinaryOp, "*");
      case clang::OO_Slash:
        return binary(ExprKind::BinaryOp, "/");
      case clang::OO_Percent:
        return binary(ExprKind::BinaryOp, "%");
      case clang::OO_Amp:
        return binary(ExprKind::BinaryOp, "&");
      case clang::OO_Pipe:
        return binary(ExprKind::BinaryOp, "|");
      case clang::OO_Caret:
        return binary(ExprKind::BinaryOp, "^");
      case clang::OO_EqualEqual:
        return binary(ExprKind::Compare, "==");
      case clang::OO_ExclaimEqual:
        return binary(ExprKind::Compare, "!=");
      case clang::OO_Less:
        return binary(ExprKind::Compare, "<");
      case clang::OO_Greater:
        return binary(ExprKind::Compare, ">");
      case clang::OO_LessEqual:
        return binary(ExprKind::Compare, "<=");
      case clang::OO_GreaterEqual:
        return binary(ExprKind::Compare, ">=");
      case clang::OO_PlusEqual:
      case clang::OO_MinusEqual:
      case clang::OO_StarEqual:
      case clang::OO_SlashEqual: {
        // In an expression (not a statement): the operation still needs one device.
        std::string spelled = clang::getOperatorSpelling(kind);
        return binary(ExprKind::BinaryOp, intern(spelled.substr(0, 1)));
      }
      default:
        break;
      }
    }
    if (tensors && op->getNumArgs() == 1 &&
        (kind == clang::OO_Minus || kind == clang::OO_Tilde || kind == clang::OO_Exclaim)) {
      Expr *e = make(ExprKind::UnaryOp, range, intern(clang::getOperatorSpelling(kind)));
      e->operands.push_back(lower(op->getArg(0)));
      return e;
    }
    // Any other operator (stream output, iterators): evaluate the operands, nothing more.
    Expr *out = call(name(range_of(op->getOperatorLoc()),
                          intern(std::string("operator") + clang::getOperatorSpelling(kind))),
                     range);
    for (unsigned i = 0; i < op->getNumArgs(); ++i)
      out->operands.push_back(lower(op->getArg(i)));
    return out;
  }

  Expr *lower_construct(const clang::CXXConstructExpr *construct, SourceRange range) {
    if (auto device = device_literal(construct))
      return string_literal(range, *device);
    if (is_options_type(construct->getType())) {
      if (Expr *device = options_device(construct))
        return device;
      return make(ExprKind::Other, range);
    }
    const clang::CXXRecordDecl *r = record_of(construct->getType());
    std::string cls = r ? r->getNameAsString() : std::string("object");
    if (r && (qualified_name(r) == "std::vector" || qualified_name(r) == "c10::List" ||
              qualified_name(r) == "std::tuple")) {
      // A container of tensors (a TorchScript module's inputs): a tuple of its elements.
      Expr *tuple = make(ExprKind::Tuple, range);
      for (const clang::Expr *arg : construct->arguments()) {
        const clang::Expr *element = strip(arg);
        if (const auto *list = llvm::dyn_cast_or_null<clang::InitListExpr>(element))
          for (const clang::Expr *item : list->inits())
            tuple->operands.push_back(lower(item));
        else if (!llvm::isa<clang::CXXDefaultArgExpr>(arg))
          tuple->operands.push_back(lower(arg));
      }
      return tuple;
    }
    Expr *callee = nullptr;
    if (r && in_namespace(r, {"torch::nn"}) &&
        (module_class_of(construct->getType()) || qualified_name(r).find("Impl") != 0))
      callee = dotted("torch.nn." + cls, range);
    else if (const clang::CXXRecordDecl *module = module_class_of(construct->getType()))
      callee = name(range, intern(module->getNameAsString()));
    else
      callee = name(range, intern(cls));
    Expr *out = call(callee, range);
    for (const clang::Expr *arg : construct->arguments())
      if (!llvm::isa<clang::CXXDefaultArgExpr>(arg))
        out->operands.push_back(lower(arg));
    return out;
  }

  Expr *lower(const clang::Expr *original) {
    const clang::Expr *e = strip(original);
    if (!e)
      return make(ExprKind::Other, fallback_);
    SourceRange range = range_of(e);
    if (const auto *paren = llvm::dyn_cast<clang::ParenExpr>(e)) {
      Expr *inner = lower(paren->getSubExpr());
      return inner;
    }
    if (is_device_type(e->getType()) || llvm::isa<clang::StringLiteral>(e))
      if (auto device = device_literal(e))
        return string_literal(range, *device);
    if (is_options_type(e->getType()) && !llvm::isa<clang::DeclRefExpr>(e)) {
      if (Expr *device = options_device(e))
        return device;
      return make(ExprKind::Other, range);
    }
    if (const auto *ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
      std::string text = ref->getDecl()->getNameAsString();
      if (const auto *f = llvm::dyn_cast<clang::FunctionDecl>(ref->getDecl())) {
        std::string path = torch_path(f);
        if (!path.empty())
          return dotted(path, range);
      }
      return name(range, intern(text));
    }
    if (llvm::isa<clang::CXXThisExpr>(e))
      return name(range, kSelf);
    if (const auto *member = llvm::dyn_cast<clang::MemberExpr>(e)) {
      const clang::Expr *base = member->getBase();
      Expr *object = lower(base);
      if (member->isImplicitAccess())
        object->range = range;
      return attribute(object, intern(member->getMemberDecl()->getNameAsString()), range);
    }
    if (const auto *c = llvm::dyn_cast<clang::CallExpr>(e))
      return lower_call(c, range);
    if (const auto *construct = llvm::dyn_cast<clang::CXXConstructExpr>(e))
      return lower_construct(construct, range);
    if (const auto *list = llvm::dyn_cast<clang::InitListExpr>(e)) {
      Expr *tuple = make(ExprKind::Tuple, range);
      for (const clang::Expr *element : list->inits())
        tuple->operands.push_back(lower(element));
      return tuple;
    }
    if (const auto *init_list = llvm::dyn_cast<clang::CXXStdInitializerListExpr>(e))
      return lower(init_list->getSubExpr());
    if (const auto *cast = llvm::dyn_cast<clang::ExplicitCastExpr>(e))
      return lower(cast->getSubExpr());
    if (const auto *binary = llvm::dyn_cast<clang::BinaryOperator>(e)) {
      std::string_view op = intern(binary->getOpcodeStr().str());
      ExprKind kind = binary->isComparisonOp() ? ExprKind::Compare
                      : binary->isLogicalOp()  ? ExprKind::BoolOp
                                               : ExprKind::BinaryOp;
      if (binary->isAssignmentOp())
        return lower(binary->getRHS());
      Expr *out = make(kind, range, op);
      out->operands.push_back(lower(binary->getLHS()));
      out->operands.push_back(lower(binary->getRHS()));
      return out;
    }
    if (const auto *unary = llvm::dyn_cast<clang::UnaryOperator>(e)) {
      if (unary->getOpcode() == clang::UO_Deref || unary->getOpcode() == clang::UO_AddrOf)
        return lower(unary->getSubExpr());
      Expr *out = make(ExprKind::UnaryOp, range,
                       intern(clang::UnaryOperator::getOpcodeStr(unary->getOpcode()).str()));
      out->operands.push_back(lower(unary->getSubExpr()));
      return out;
    }
    if (const auto *cond = llvm::dyn_cast<clang::ConditionalOperator>(e)) {
      Expr *out = make(ExprKind::Conditional, range);
      out->operands.push_back(lower(cond->getTrueExpr()));
      out->operands.push_back(lower(cond->getCond()));
      out->operands.push_back(lower(cond->getFalseExpr()));
      return out;
    }
    if (llvm::isa<clang::IntegerLiteral>(e) || llvm::isa<clang::FloatingLiteral>(e))
      return make(ExprKind::Number, range);
    if (llvm::isa<clang::CXXBoolLiteralExpr>(e))
      return make(ExprKind::Bool, range);
    if (llvm::isa<clang::CXXNullPtrLiteralExpr>(e))
      return make(ExprKind::NoneLiteral, range);
    if (const auto *str = llvm::dyn_cast<clang::StringLiteral>(e))
      return string_literal(range, str->getString().str());
    if (llvm::isa<clang::LambdaExpr>(e))
      return make(ExprKind::Lambda, range);
    return make(ExprKind::Other, range);
  }
};

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

// ---- running Clang ----

class Consumer final : public clang::ASTConsumer {
public:
  explicit Consumer(std::function<void(clang::ASTContext &)> done) : done_(std::move(done)) {}
  void HandleTranslationUnit(clang::ASTContext &ctx) override { done_(ctx); }

private:
  std::function<void(clang::ASTContext &)> done_;
};

class LowerAction final : public clang::ASTFrontendAction {
public:
  explicit LowerAction(std::function<void(clang::ASTContext &)> done) : done_(std::move(done)) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &,
                                                        llvm::StringRef) override {
    return std::make_unique<Consumer>(done_);
  }

private:
  std::function<void(clang::ASTContext &)> done_;
};

// Collects Clang's errors for one summary warning (warnings are not devlint's business).
class CollectingDiagnostics final : public clang::DiagnosticConsumer {
public:
  struct Error {
    std::string file;
    unsigned line = 0, column = 0;
    std::string message;
    bool missing_header = false;
    std::string header; // a header not found or not opened, as the #include spells it
  };
  std::vector<Error> errors;

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic &info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Error)
      return;
    Error e;
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    e.message = text.str().str();
    e.missing_header = info.getID() == clang::diag::err_pp_file_not_found;
    bool not_opened = info.getID() == clang::diag::err_cannot_open_file;
    if ((e.missing_header || not_opened) && info.getNumArgs() > 0 &&
        info.getArgKind(0) == clang::DiagnosticsEngine::ak_std_string)
      e.header = info.getArgStdStr(0);
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      clang::PresumedLoc p = info.getSourceManager().getPresumedLoc(info.getLocation());
      if (p.isValid()) {
        e.file = p.getFilename();
        e.line = p.getLine();
        e.column = p.getColumn();
      }
    }
    errors.push_back(std::move(e));
  }
};

std::string resource_dir() { return DEVLINT_CLANG_RESOURCE_DIR; }

// LibTorch's include directories: DIR/include and its C++ API under it.
std::vector<std::string> libtorch_includes(const CppSettings &settings) {
  std::vector<std::string> roots;
  // A directory the user named is the only place looked at: no silent fallback.
  if (!settings.libtorch_dir.empty())
    roots = {(fs::path(settings.libtorch_dir) / "include").string(), settings.libtorch_dir};
  else
    roots = {"/usr/include", "/usr/local/include"};
  for (const std::string &root : roots) {
    fs::path api = fs::path(root) / "torch/csrc/api/include";
    std::error_code ec;
    if (fs::exists(api / "torch/torch.h", ec)) {
      std::vector<std::string> out{api.string()};
      if (root != "/usr/include" && root != "/usr/local/include")
        out.push_back(root);
      return out;
    }
  }
  return {};
}

std::vector<std::string> base_arguments(const CppSettings &settings) {
  // No caret diagnostics: Clang then prints no "N errors generated" of its own.
  std::vector<std::string> args{"clang++",
                                "-std=c++17",
                                "-fsyntax-only",
                                "-Wno-everything",
                                "-fno-caret-diagnostics",
                                "-resource-dir=" + resource_dir()};
  for (const std::string &dir : libtorch_includes(settings)) {
    args.push_back("-isystem");
    args.push_back(dir);
  }
  return args;
}

std::string hex(size_t v) {
  std::ostringstream out;
  out << std::hex << v;
  return out.str();
}

constexpr const char *kPchHeaderName = "devlint-torch-pch.h";
constexpr const char *kPchHeaderText = "#include <torch/torch.h>\n#include <torch/script.h>\n";

std::string pch_path(const CppSettings &settings) {
  if (settings.pch_dir.empty())
    return {};
  std::vector<std::string> args = base_arguments(settings);
  std::string key = LLVM_VERSION_STRING;
  for (const std::string &a : args)
    key += "\n" + a;
  for (const std::string &dir : libtorch_includes(settings)) {
    std::error_code ec;
    auto stamp = fs::last_write_time(fs::path(dir) / "torch/torch.h", ec);
    key += "\n" + std::to_string(ec ? 0 : stamp.time_since_epoch().count());
  }
  return (fs::path(settings.pch_dir) / ("torch-" + hex(std::hash<std::string>()(key)) + ".pch"))
      .string();
}

std::mutex pch_mutex; // one writer per process; other processes see only finished files

// The texts given in memory over the disk; with `confined`, Clang reads the disk only there.
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
overlay(const std::map<std::string, std::string> &files,
        llvm::IntrusiveRefCntPtr<ConfinedFileSystem> confined) {
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  for (const auto &[path, text] : files)
    memory->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(text, path));
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> disk = llvm::vfs::getRealFileSystem();
  if (confined)
    disk = confined;
  auto out = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(disk);
  out->pushOverlay(memory);
  return out;
}

// Clang 14 itself recurses without end on some malformed C++ (`clang++ -std=c++17 -fsyntax-only`
// crashes on fuzz/regressions/cpp_frontend/clang_parser_recursion.cpp too). LLVM's crash recovery
// turns such a crash into a failed run of this one file; its signal handler is moved onto an
// alternate stack, without which a stack overflow could not run it.
void enable_crash_recovery() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::CrashRecoveryContext::Enable();
    for (int signal : {SIGSEGV, SIGBUS}) {
      struct sigaction action;
      if (sigaction(signal, nullptr, &action) == 0) {
        action.sa_flags |= SA_ONSTACK;
        sigaction(signal, &action, nullptr);
      }
    }
  });
}

enum class ToolRun { Succeeded, Failed, Crashed };

// Runs Clang on a thread of its own with Clang's preferred stack size and an alternate signal
// stack, under crash recovery. After a crash the objects of that run are leaked, not destroyed:
// their state is unknown.
ToolRun run_tool(std::vector<std::string> args, std::unique_ptr<clang::FrontendAction> action,
                 const std::map<std::string, std::string> &files, clang::DiagnosticConsumer &diags,
                 llvm::IntrusiveRefCntPtr<ConfinedFileSystem> confined = nullptr) {
  enable_crash_recovery();
  constexpr size_t kSignalStackSize = 1 << 16;
  std::unique_ptr<char[]> signal_stack(new char[kSignalStackSize]);
  bool succeeded = false;
  auto run = [&] {
    clang::noteBottomOfStack();
    auto *manager = new clang::FileManager(clang::FileSystemOptions(), overlay(files, confined));
    manager->Retain();
    auto *invocation =
        new clang::tooling::ToolInvocation(std::move(args), std::move(action), manager);
    invocation->setDiagnosticConsumer(&diags);
    succeeded = invocation->run();
    delete invocation;
    manager->Release();
  };
  bool recovered = true;
  auto on_thread = [&] {
    // A thread may already have one (AddressSanitizer gives every thread its own, and unmaps it
    // when the thread ends): only a thread without one gets ours.
    stack_t before{};
    bool own_stack = sigaltstack(nullptr, &before) == 0 && (before.ss_flags & SS_DISABLE);
    if (own_stack) {
      stack_t alternate{};
      alternate.ss_sp = signal_stack.get();
      alternate.ss_size = kSignalStackSize;
      sigaltstack(&alternate, nullptr);
    }
    llvm::CrashRecoveryContext recovery;
    recovered = recovery.RunSafely(run);
    // The thread leaves with the stack it came with, crash or not. LLVM puts a heap-allocated one
    // of its own on the thread that first registers its signal handlers (Clang does, while it
    // runs), and AddressSanitizer would unmap that one as its own when the thread ends.
    stack_t restore = before;
    if (own_stack) {
      restore = stack_t{};
      restore.ss_flags = SS_DISABLE;
    }
    sigaltstack(&restore, nullptr);
  };
  llvm::thread worker(llvm::Optional<unsigned>(clang::DesiredStackSize), on_thread);
  worker.join();
  if (!recovered)
    return ToolRun::Crashed;
  return succeeded ? ToolRun::Succeeded : ToolRun::Failed;
}

// The PCH directory is the user's (driver/cache_location.h): private to them, checked before use.
// Every file is written through a fresh O_EXCL|O_NOFOLLOW name and renamed into place, and only
// plain files of this user are read, so a link planted at any name is replaced, never followed.
std::string build_pch(const CppSettings &settings, std::string &error) {
  std::string path = pch_path(settings);
  if (path.empty())
    return {};
  std::lock_guard<std::mutex> lock(pch_mutex);
  if (std::string problem = make_private_directory(settings.pch_dir, LinkPolicy::FollowOwn);
      !problem.empty()) {
    error = "not using a precompiled LibTorch header: " + problem;
    return {};
  }
  if (is_own_plain_file(path))
    return path;
  // The header is a real file: the PCH refers to it by path.
  std::string header = (fs::path(settings.pch_dir) / kPchHeaderName).string();
  if (read_plain_file(header, 1 << 12) != std::optional<std::string>(kPchHeaderText)) {
    if (std::string problem = write_file_replacing(header, kPchHeaderText); !problem.empty()) {
      error = "cannot write the precompiled header's source: " + problem;
      return {};
    }
  }
  std::string temporary = make_temporary_file(path);
  if (temporary.empty()) {
    error = "cannot store the precompiled header in " + settings.pch_dir;
    return {};
  }
  std::error_code ec;
  std::vector<std::string> args = base_arguments(settings);
  args.erase(std::remove(args.begin(), args.end(), "-fsyntax-only"), args.end());
  args.insert(args.end(), {"-x", "c++-header", header, "-o", temporary});
  CollectingDiagnostics diags;
  auto tell = [&](PchBuild event) {
    if (settings.on_pch_build)
      settings.on_pch_build(event, path);
  };
  tell(PchBuild::Started);
  bool ok =
      run_tool(args, std::make_unique<clang::GeneratePCHAction>(), {}, diags) == ToolRun::Succeeded;
  if (!ok || !diags.errors.empty() || !is_own_plain_file(temporary)) {
    tell(PchBuild::Failed);
    fs::remove(temporary, ec);
    error = "cannot build the precompiled LibTorch header" +
            (diags.errors.empty() ? std::string() : ": " + diags.errors.front().message);
    return {};
  }
  fs::permissions(temporary, fs::perms::owner_read | fs::perms::owner_write, ec);
  fs::rename(temporary, path, ec);
  tell(ec ? PchBuild::Failed : PchBuild::Finished);
  if (ec) {
    fs::remove(temporary, ec);
    error = "cannot store the precompiled header in " + settings.pch_dir + ": " + ec.message();
    return {};
  }
  return path;
}

// What Clang may read besides the checkout: LibTorch's and the system's include directories,
// Clang's own headers and the precompiled header's directory.
std::vector<std::string> trusted_roots(const CppSettings &settings) {
  std::vector<std::string> roots = libtorch_includes(settings);
  for (const char *system : {"/usr/include", "/usr/local/include", "/usr/lib/gcc"})
    roots.push_back(system);
  roots.push_back(resource_dir());
  if (!settings.pch_dir.empty())
    roots.push_back(settings.pch_dir);
  return roots;
}

// The arguments of a file with a compile_commands.json entry: devlint's own, then the flags the
// allow-list kept (compile_flags.h). The database's compiler is never run.
std::vector<std::string> database_arguments(const CompileSetup &setup) {
  std::vector<std::string> args{"clang++", "-fsyntax-only", "-Wno-everything",
                                "-fno-caret-diagnostics", "-resource-dir=" + resource_dir()};
  args.insert(args.end(), setup.arguments.begin(), setup.arguments.end());
  return args;
}

// Whether a file includes a torch header, itself or through the project headers it includes by
// a quoted path relative to itself (the only ones the default flags find): then the shared
// precompiled header saves parsing `torch/torch.h` again. `texts` stand in for files on disk.
bool includes_torch(const std::string &text, const fs::path &directory,
                    const std::map<std::string, std::string> &texts, std::set<std::string> &seen) {
  if (text.find("torch/") != std::string::npos)
    return true;
  for (size_t at = text.find("#include \""); at != std::string::npos && seen.size() < 64;
       at = text.find("#include \"", at + 1)) {
    size_t begin = at + 10, end = text.find('"', begin);
    if (end == std::string::npos || text.find('\n', begin) < end)
      continue;
    std::string path = (directory / text.substr(begin, end - begin)).lexically_normal().string();
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
    if (includes_torch(header, fs::path(path).parent_path(), texts, seen))
      return true;
  }
  return false;
}

} // namespace

bool is_cpp_source_path(const std::string &path) {
  return has_extension(path, {".cpp", ".cc", ".cxx"});
}
bool is_cpp_header_path(const std::string &path) {
  return has_extension(path, {".h", ".hh", ".hpp", ".hxx"});
}

std::vector<std::string> cpp_compile_arguments(const std::string &main,
                                               const CppSettings &settings) {
  CompileSetup setup = compile_setup_for(main, settings.build_dir, trusted_roots(settings));
  std::vector<std::string> args =
      setup.from_database ? database_arguments(setup) : base_arguments(settings);
  // What else decides the result: where Clang may read, and the warnings about the database.
  args.push_back(setup.checkout);
  args.insert(args.end(), setup.warnings.begin(), setup.warnings.end());
  return args;
}

std::vector<std::string> default_cpp_arguments(const CppSettings &settings) {
  return base_arguments(settings);
}

std::string prepare_cpp_pch(const CppSettings &settings, std::string &error) {
  return build_pch(settings, error);
}

CppUnit lower_cpp(const SourceFile &main, const CppSettings &settings, const CppTexts *texts) {
  CppUnit unit;
  std::string absolute = fs::absolute(main.path).lexically_normal().string();
  CompileSetup setup = compile_setup_for(main.path, settings.build_dir, trusted_roots(settings));
  bool defaults = !setup.from_database;
  std::vector<std::string> args = defaults ? base_arguments(settings) : database_arguments(setup);
  for (const std::string &warning : setup.warnings)
    unit.diagnostics.push_back({Severity::Warning, main.display_path, 0, 0, warning});
  std::map<std::string, std::string> files{{absolute, main.text}};
  if (texts)
    for (const auto &[path, text] : *texts)
      if (is_cpp_header_path(path))
        files.emplace(fs::absolute(path).lexically_normal().string(), text);
  std::string pch_error;
  std::set<std::string> seen{absolute};
  if (defaults && !libtorch_includes(settings).empty() &&
      includes_torch(main.text, fs::path(absolute).parent_path(), files, seen)) {
    std::string pch = build_pch(settings, pch_error);
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
    bool torch = e.message.find("torch") != std::string::npos ||
                 e.message.find("ATen") != std::string::npos ||
                 e.message.find("c10") != std::string::npos;
    std::string message = e.message + (torch ? "; LibTorch's headers were not found: pass "
                                               "`--libtorch DIR` (or set `libtorch` in the "
                                               "configuration) or `-p BUILD_DIR` with a "
                                               "compile_commands.json"
                                             : "; pass the include paths with `-p BUILD_DIR` "
                                               "(a compile_commands.json)");
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
