// Expressions: calls, operators, constructions, device literals and tensor options.
#include "frontend/cpp/lowerer.h"

#include <algorithm>
#include <filesystem>

#include <clang/AST/StmtCXX.h>
#include <clang/Lex/Lexer.h>

namespace devlint::cpp {
namespace fs = std::filesystem;

const clang::Expr *Lowerer::strip(const clang::Expr *e) {
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
std::optional<std::string> Lowerer::device_literal(const clang::Expr *e) {
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
std::optional<std::string>
Lowerer::device_from_arguments(const std::vector<const clang::Expr *> &args) {
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
Expr *Lowerer::options_device(const clang::Expr *e, int depth) {
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
std::string Lowerer::torch_path(const clang::FunctionDecl *f) {
  std::string q = qualified_name(f);
  std::string leaf = f->getNameAsString();
  if (q.rfind("torch::nn::functional::", 0) == 0)
    return "torch.nn.functional." + leaf;
  if (q.rfind("torch::jit::", 0) == 0)
    return "torch.jit." + leaf;
  if (q.rfind("torch::cuda::", 0) == 0)
    return "torch.cuda." + leaf;
  if (q.rfind("torch::data::", 0) == 0)
    return "torch.data." + leaf;
  if (q.rfind("at::", 0) == 0 || q.rfind("torch::", 0) == 0 || q.rfind("c10::", 0) == 0)
    return "torch." + leaf;
  return {};
}

void Lowerer::add_arguments(Expr *out, const clang::CallExpr *c, bool factory, unsigned first) {
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

Expr *Lowerer::lower_call(const clang::CallExpr *c, SourceRange range) {
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
          if (const clang::CXXRecordDecl *inner = record_of(spec->getTemplateArgs()[0].getAsType()))
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

Expr *Lowerer::lower_operator(const clang::CXXOperatorCallExpr *op, SourceRange range) {
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

Expr *Lowerer::lower_construct(const clang::CXXConstructExpr *construct, SourceRange range) {
  if (auto device = device_literal(construct))
    return string_literal(range, *device);
  // A device whose value is known only at run time (`Device(cond ? kCUDA : kCPU)`,
  // `Device(kCUDA, i)`): `torch.device(...)`, which the analysis keeps as one device value.
  if (is_device_type(construct->getType()) && construct->getNumArgs() > 0) {
    Expr *out = call(dotted("torch.device", range), range);
    for (const clang::Expr *arg : construct->arguments())
      if (!llvm::isa<clang::CXXDefaultArgExpr>(arg))
        out->operands.push_back(lower(arg));
    return out;
  }
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

Expr *Lowerer::lower(const clang::Expr *original) {
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

} // namespace devlint::cpp
