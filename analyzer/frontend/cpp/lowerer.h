// Lowering one Clang translation unit into the program model (model/syntax.h): module classes,
// their methods and the functions outside any module, as the Python frontend would have written
// them (docs/CPP_DEVICE_MODEL.md). Declarations (lowering_declarations.cpp), statements
// (lowering_statements.cpp) and expressions (lowering_expressions.cpp) are lowered in a file each.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <clang/AST/ASTContext.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/ExprCXX.h>
#include <clang/Basic/SourceManager.h>

#include "frontend/cpp/clang_types.h"
#include "frontend/cpp/cpp_frontend.h"

namespace devlint::cpp {

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

  void run();

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

  FileOut *out_for(clang::FileID fid);

  FileOut *out_for(clang::SourceLocation loc) {
    if (loc.isInvalid())
      return nullptr;
    return out_for(sm_.getFileID(sm_.getExpansionLoc(loc)));
  }

  // ---- ranges ----

  SourceRange make_range(const SourceFile &file, uint32_t begin, uint32_t end) const;

  SourceRange range_of(clang::SourceRange source_range);

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
  Expr *dotted(const std::string &path, SourceRange range);
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

  void collect(const clang::DeclContext *dc);

  Expr *base_expr(const clang::CXXBaseSpecifier &b, SourceRange range);

  void lower_class(const clang::CXXRecordDecl *r);

  // `fc = register_module("fc", Linear(...))`, `w = register_parameter("w", ...)`: the member
  // holds what was registered.
  Stmt *member_assignment(const clang::FieldDecl *field, const clang::Expr *init,
                          SourceRange range);

  Stmt *assignment(Expr *target, const clang::Expr *value, SourceRange range);

  void add_parameters(FunctionDef *fn, const clang::FunctionDecl *f);

  FunctionDef *lower_method(const clang::CXXMethodDecl *m, ClassDef *cls, FileOut *file,
                            const std::vector<Stmt *> *member_inits);

  void lower_function_definition(const clang::FunctionDecl *f);

  // ---- statements ----

  void lower_block(const clang::Stmt *s, std::vector<Stmt *> &out);

  void lower_stmt(const clang::Stmt *s, std::vector<Stmt *> &out);

  void lower_stmt_at(const clang::Stmt *s, SourceRange range, std::vector<Stmt *> &out);

  static std::string_view assignment_operator(const clang::Expr *e, const clang::Expr *&lhs,
                                              const clang::Expr *&rhs);

  Stmt *expression_statement(const clang::Expr *e, SourceRange range);
  void registered_member(Expr *call);

  // ---- expressions ----

  static const clang::Expr *strip(const clang::Expr *e);

  // What a device expression says when it is a literal: "cuda", "cuda:1", "cpu".
  std::optional<std::string> device_literal(const clang::Expr *e);

  // Device(type), Device(type, index), Device("cuda:1").
  std::optional<std::string> device_from_arguments(const std::vector<const clang::Expr *> &args);

  // The device part of a TensorOptions expression: `.device(d)` in a chain, `torch::device(d)`,
  // `x.options()` (x's device), a Device or DeviceType converted to options. Null: no device.
  Expr *options_device(const clang::Expr *e, int depth = 0);

  // torch:: / at:: functions as the Python names the analysis knows.
  std::string torch_path(const clang::FunctionDecl *f);

  void add_arguments(Expr *out, const clang::CallExpr *c, bool factory, unsigned first = 0);

  Expr *lower_call(const clang::CallExpr *c, SourceRange range);

  Expr *lower_operator(const clang::CXXOperatorCallExpr *op, SourceRange range);

  Expr *lower_construct(const clang::CXXConstructExpr *construct, SourceRange range);

  Expr *lower(const clang::Expr *original);
};

} // namespace devlint::cpp
