// Declarations: files, classes and their members, methods and free functions.
#include "frontend/cpp/lowerer.h"

#include <algorithm>
#include <filesystem>

#include <clang/AST/StmtCXX.h>
#include <clang/Lex/Lexer.h>

namespace devlint::cpp {
namespace fs = std::filesystem;

void Lowerer::run() {
  // The main file first, so syntax[0] is always it.
  out_for(sm_.getMainFileID());
  collect(ctx_.getTranslationUnitDecl());
  for (const clang::CXXRecordDecl *r : records_)
    lower_class(r);
  for (const clang::FunctionDecl *f : functions_)
    lower_function_definition(f);
}

FileOut *Lowerer::out_for(clang::FileID fid) {
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

SourceRange Lowerer::make_range(const SourceFile &file, uint32_t begin, uint32_t end) const {
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

SourceRange Lowerer::range_of(clang::SourceRange source_range) {
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

// `torch.nn.functional.cross_entropy` as a Name/Attribute chain spanning `range`.
Expr *Lowerer::dotted(const std::string &path, SourceRange range) {
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

void Lowerer::collect(const clang::DeclContext *dc) {
  // Only what this unit parsed: iterating a precompiled header's declarations would read them
  // all back from it (a third of the run on a LibTorch file), and none is the project's.
  for (const clang::Decl *d : dc->noload_decls()) {
    bool system = d->getLocation().isValid() && sm_.isInSystemHeader(d->getLocation());
    if (const auto *ns = llvm::dyn_cast<clang::NamespaceDecl>(d)) {
      if (!system)
        collect(ns);
    } else if (const auto *ls = llvm::dyn_cast<clang::LinkageSpecDecl>(d)) {
      if (!system)
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
      // A template has types to reason with once instantiated (`train<DataLoader>(...)`): its
      // first instantiation with a body stands for it.
      for (const clang::FunctionDecl *instance : t->specializations())
        if (instance->doesThisDeclarationHaveABody() && !instance->isDependentContext() &&
            !llvm::isa<clang::CXXMethodDecl>(instance) && in_project(instance)) {
          functions_.push_back(instance);
          break;
        }
    }
  }
}

Expr *Lowerer::base_expr(const clang::CXXBaseSpecifier &b, SourceRange range) {
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

void Lowerer::lower_class(const clang::CXXRecordDecl *r) {
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
Stmt *Lowerer::member_assignment(const clang::FieldDecl *field, const clang::Expr *init,
                                 SourceRange range) {
  SourceRange saved = fallback_;
  fallback_ = range;
  Expr *target = attribute(name(range_of(field->getLocation()), kSelf),
                           intern(field->getNameAsString()), range_of(field->getLocation()));
  Stmt *s = assignment(target, init, range);
  fallback_ = saved;
  return s;
}

Stmt *Lowerer::assignment(Expr *target, const clang::Expr *value, SourceRange range) {
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
      lowered->operands[1] = string_literal(lowered->operands[1]->range, std::string(target->text));
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

void Lowerer::add_parameters(FunctionDef *fn, const clang::FunctionDecl *f) {
  for (const clang::ParmVarDecl *p : f->parameters()) {
    Parameter param;
    param.name = intern(p->getNameAsString());
    param.range = range_of(p);
    param.annotation =
        intern(is_tensor_type(p->getType())   ? "torch.Tensor"
               : is_device_type(p->getType()) ? "torch.device"
                                              : p->getType().getNonReferenceType().getAsString());
    if (p->hasDefaultArg() && !p->hasUninstantiatedDefaultArg() && p->getDefaultArg())
      param.default_value = lower(p->getDefaultArg());
    fn->parameters.push_back(param);
  }
}

FunctionDef *Lowerer::lower_method(const clang::CXXMethodDecl *m, ClassDef *cls, FileOut *file,
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

void Lowerer::lower_function_definition(const clang::FunctionDecl *f) {
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

} // namespace devlint::cpp
