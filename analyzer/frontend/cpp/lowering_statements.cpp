// Statements: blocks, declarations, control flow, assignments and in-place moves.
#include "frontend/cpp/lowerer.h"

#include <algorithm>
#include <filesystem>

#include <clang/AST/StmtCXX.h>
#include <clang/Lex/Lexer.h>

namespace devlint::cpp {
namespace fs = std::filesystem;

void Lowerer::lower_block(const clang::Stmt *s, std::vector<Stmt *> &out) {
  if (!s)
    return;
  if (const auto *compound = llvm::dyn_cast<clang::CompoundStmt>(s)) {
    for (const clang::Stmt *child : compound->body())
      lower_stmt(child, out);
    return;
  }
  lower_stmt(s, out);
}

void Lowerer::lower_stmt(const clang::Stmt *s, std::vector<Stmt *> &out) {
  if (!s)
    return;
  SourceRange range = range_of(s);
  SourceRange saved = fallback_;
  fallback_ = range;
  lower_stmt_at(s, range, out);
  fallback_ = saved;
}

void Lowerer::lower_stmt_at(const clang::Stmt *s, SourceRange range, std::vector<Stmt *> &out) {
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

std::string_view Lowerer::assignment_operator(const clang::Expr *e, const clang::Expr *&lhs,
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

// `register_parameter("w", w_);` without assignment registers the member `w_` itself: the
// registered tensor and the member share their storage, and `Module::to` moves it in place. The
// methods read it by the member's name, so it is registered under that name.
void Lowerer::registered_member(Expr *call) {
  if (call->kind != ExprKind::Call || call->operands.size() < 3 ||
      call->operands[0]->kind != ExprKind::Attribute ||
      !is_name(call->operands[0]->operands[0], "self") ||
      call->operands[1]->kind != ExprKind::String)
    return;
  std::string_view method = call->text;
  const Expr *value = call->operands[2];
  if ((method == "register_parameter" || method == "register_buffer" ||
       method == "register_module") &&
      value->kind == ExprKind::Attribute && is_name(value->operands[0], "self"))
    call->operands[1] = string_literal(call->operands[1]->range, std::string(value->text));
}

Stmt *Lowerer::expression_statement(const clang::Expr *e, SourceRange range) {
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
  registered_member(s->value);
  return s;
}

} // namespace devlint::cpp
