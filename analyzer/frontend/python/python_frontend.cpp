#include "frontend/python/python_frontend.h"

#include "frontend/python/python_lowering.h"

#include <array>
#include <cstring>
#include <string>
#include <tree_sitter/api.h>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frontend/python/python_syntax_errors.h"

extern "C" const TSLanguage *tree_sitter_python(void);

namespace devlint {
namespace {

enum class Sym : uint8_t {
  Unknown,
  Module,
  ClassDefinition,
  FunctionDefinition,
  DecoratedDefinition,
  Decorator,
  ExpressionStatement,
  Assignment,
  AugmentedAssignment,
  IfStatement,
  ElifClause,
  ElseClause,
  ForStatement,
  WhileStatement,
  WithStatement,
  WithClause,
  WithItem,
  AsPattern,
  TryStatement,
  ExceptClause,
  ExceptGroupClause,
  FinallyClause,
  ReturnStatement,
  DeleteStatement,
  RaiseStatement,
  ImportStatement,
  ImportFromStatement,
  AliasedImport,
  DottedName,
  RelativeImport,
  Block,
  Identifier,
  Attribute,
  Subscript,
  Call,
  ArgumentList,
  KeywordArgument,
  ListSplat,
  DictionarySplat,
  BinaryOperator,
  UnaryOperator,
  ComparisonOperator,
  BooleanOperator,
  NotOperator,
  ConditionalExpression,
  Tuple,
  List,
  Set,
  Dictionary,
  Pair,
  ParenthesizedExpression,
  ExpressionList,
  PatternList,
  TuplePattern,
  ListPattern,
  ListSplatPattern,
  DictionarySplatPattern,
  Integer,
  Float,
  String,
  ConcatenatedString,
  StringContent,
  True,
  False,
  None,
  Slice,
  Lambda,
  ListComprehension,
  GeneratorExpression,
  SetComprehension,
  DictionaryComprehension,
  ForInClause,
  IfClause,
  NamedExpression,
  Await,
  Parameters,
  DefaultParameter,
  TypedParameter,
  TypedDefaultParameter,
  Comment,
  Error,
};

struct SymbolTable {
  std::vector<Sym> by_symbol;
  TSFieldId left, right, value, name, body, condition, consequence, alternative, function,
      arguments, object, attribute, subscript, operator_, superclasses, parameters, definition,
      module_name, alias, argument, type, key, return_type;

  SymbolTable() {
    const TSLanguage *lang = tree_sitter_python();
    static const std::unordered_map<std::string, Sym> names = {
        {"module", Sym::Module},
        {"class_definition", Sym::ClassDefinition},
        {"function_definition", Sym::FunctionDefinition},
        {"decorated_definition", Sym::DecoratedDefinition},
        {"decorator", Sym::Decorator},
        {"expression_statement", Sym::ExpressionStatement},
        {"assignment", Sym::Assignment},
        {"augmented_assignment", Sym::AugmentedAssignment},
        {"if_statement", Sym::IfStatement},
        {"elif_clause", Sym::ElifClause},
        {"else_clause", Sym::ElseClause},
        {"for_statement", Sym::ForStatement},
        {"while_statement", Sym::WhileStatement},
        {"with_statement", Sym::WithStatement},
        {"with_clause", Sym::WithClause},
        {"with_item", Sym::WithItem},
        {"as_pattern", Sym::AsPattern},
        {"try_statement", Sym::TryStatement},
        {"except_clause", Sym::ExceptClause},
        {"except_group_clause", Sym::ExceptGroupClause},
        {"finally_clause", Sym::FinallyClause},
        {"return_statement", Sym::ReturnStatement},
        {"delete_statement", Sym::DeleteStatement},
        {"raise_statement", Sym::RaiseStatement},
        {"import_statement", Sym::ImportStatement},
        {"import_from_statement", Sym::ImportFromStatement},
        {"aliased_import", Sym::AliasedImport},
        {"dotted_name", Sym::DottedName},
        {"relative_import", Sym::RelativeImport},
        {"block", Sym::Block},
        {"identifier", Sym::Identifier},
        {"attribute", Sym::Attribute},
        {"subscript", Sym::Subscript},
        {"call", Sym::Call},
        {"argument_list", Sym::ArgumentList},
        {"keyword_argument", Sym::KeywordArgument},
        {"list_splat", Sym::ListSplat},
        {"dictionary_splat", Sym::DictionarySplat},
        {"binary_operator", Sym::BinaryOperator},
        {"unary_operator", Sym::UnaryOperator},
        {"comparison_operator", Sym::ComparisonOperator},
        {"boolean_operator", Sym::BooleanOperator},
        {"not_operator", Sym::NotOperator},
        {"conditional_expression", Sym::ConditionalExpression},
        {"tuple", Sym::Tuple},
        {"list", Sym::List},
        {"set", Sym::Set},
        {"dictionary", Sym::Dictionary},
        {"pair", Sym::Pair},
        {"parenthesized_expression", Sym::ParenthesizedExpression},
        {"expression_list", Sym::ExpressionList},
        {"pattern_list", Sym::PatternList},
        {"tuple_pattern", Sym::TuplePattern},
        {"list_pattern", Sym::ListPattern},
        {"list_splat_pattern", Sym::ListSplatPattern},
        {"dictionary_splat_pattern", Sym::DictionarySplatPattern},
        {"integer", Sym::Integer},
        {"float", Sym::Float},
        {"string", Sym::String},
        {"concatenated_string", Sym::ConcatenatedString},
        {"string_content", Sym::StringContent},
        {"true", Sym::True},
        {"false", Sym::False},
        {"none", Sym::None},
        {"slice", Sym::Slice},
        {"lambda", Sym::Lambda},
        {"list_comprehension", Sym::ListComprehension},
        {"generator_expression", Sym::GeneratorExpression},
        {"set_comprehension", Sym::SetComprehension},
        {"dictionary_comprehension", Sym::DictionaryComprehension},
        {"for_in_clause", Sym::ForInClause},
        {"if_clause", Sym::IfClause},
        {"named_expression", Sym::NamedExpression},
        {"await", Sym::Await},
        {"parameters", Sym::Parameters},
        {"lambda_parameters", Sym::Parameters},
        {"default_parameter", Sym::DefaultParameter},
        {"typed_parameter", Sym::TypedParameter},
        {"typed_default_parameter", Sym::TypedDefaultParameter},
        {"comment", Sym::Comment},
        {"ERROR", Sym::Error},
    };
    uint32_t count = ts_language_symbol_count(lang);
    by_symbol.assign(count + 1, Sym::Unknown);
    for (uint32_t s = 0; s < count; ++s) {
      if (ts_language_symbol_type(lang, static_cast<TSSymbol>(s)) != TSSymbolTypeRegular)
        continue;
      auto it = names.find(ts_language_symbol_name(lang, static_cast<TSSymbol>(s)));
      if (it != names.end())
        by_symbol[s] = it->second;
    }
    by_symbol[count] = Sym::Unknown;
    auto field = [&](const char *n) {
      return ts_language_field_id_for_name(lang, n, static_cast<uint32_t>(std::strlen(n)));
    };
    left = field("left");
    right = field("right");
    value = field("value");
    name = field("name");
    body = field("body");
    condition = field("condition");
    consequence = field("consequence");
    alternative = field("alternative");
    function = field("function");
    arguments = field("arguments");
    object = field("object");
    attribute = field("attribute");
    subscript = field("subscript");
    operator_ = field("operator");
    superclasses = field("superclasses");
    parameters = field("parameters");
    definition = field("definition");
    module_name = field("module_name");
    alias = field("alias");
    argument = field("argument");
    type = field("type");
    key = field("key");
    return_type = field("return_type");
  }
};

const SymbolTable &symbols() {
  static const SymbolTable table;
  return table;
}

// Deeply nested input (generated code, fuzzed files) must not overflow the native stack.
constexpr int kMaxDepth = kMaxSyntaxDepth;

class Lowering {
public:
  Lowering(const SourceFile &source, SyntaxFile &out) : src_(source), out_(out), sym_(symbols()) {}

  void lower_module(TSNode root) {
    for_each_named_child(root, [&](TSNode child) { lower_statement(child, out_.body, 0); });
    for (const Stmt *s : out_.body)
      if (s->kind == StmtKind::FunctionDef)
        out_.functions.push_back(s->function);
    // A class defined in the branch a module-level `if is_<library>_available():` takes (a
    // model's own blocks when the optional library is absent) is the module the model builds.
    // Functions stay the top-level ones: a call reaches the library's function where the
    // library is installed, not the fallback that raises (the simulation reads both branches'
    // definitions as its machine runs them).
    for (const Stmt *s : module_level_statements(out_.body))
      if (s->kind == StmtKind::ClassDef)
        out_.classes.push_back(s->class_def);
  }

private:
  void note_too_deep(TSNode n) {
    if (out_.too_deep.empty())
      out_.too_deep.push_back(range(n));
  }

  const SourceFile &src_;
  SyntaxFile &out_;
  const SymbolTable &sym_;

  Sym kind(TSNode n) const {
    TSSymbol s = ts_node_symbol(n);
    if (s == static_cast<TSSymbol>(-1)) // tree-sitter's builtin ERROR symbol
      return Sym::Error;
    return s < sym_.by_symbol.size() ? sym_.by_symbol[s] : Sym::Unknown;
  }
  SourceRange range(TSNode n) const { return node_range(n); }
  std::string_view text(TSNode n) const {
    return std::string_view(src_.text).substr(ts_node_start_byte(n),
                                              ts_node_end_byte(n) - ts_node_start_byte(n));
  }
  TSNode field(TSNode n, TSFieldId id) const { return ts_node_child_by_field_id(n, id); }

  // Iterates children with a cursor: ts_node_child(i) is linear in i, a cursor is not.
  template <class F> void for_each_child(TSNode n, F &&fn) const {
    TSTreeCursor cursor = ts_tree_cursor_new(n);
    if (ts_tree_cursor_goto_first_child(&cursor)) {
      do {
        fn(ts_tree_cursor_current_node(&cursor));
      } while (ts_tree_cursor_goto_next_sibling(&cursor));
    }
    ts_tree_cursor_delete(&cursor);
  }
  template <class F> void for_each_named_child(TSNode n, F &&fn) const {
    for_each_child(n, [&](TSNode c) {
      if (ts_node_is_named(c) && kind(c) != Sym::Comment)
        fn(c);
    });
  }

  Expr *make_expr(ExprKind k, TSNode n) {
    Expr *e = out_.make<Expr>();
    e->kind = k;
    e->range = range(n);
    return e;
  }

  // ---- statements ----

  void lower_block(TSNode block, std::vector<Stmt *> &into, int depth) {
    if (ts_node_is_null(block))
      return;
    if (kind(block) != Sym::Block) {
      lower_statement(block, into, depth);
      return;
    }
    for_each_named_child(block, [&](TSNode c) { lower_statement(c, into, depth + 1); });
  }

  Stmt *make_stmt(StmtKind k, TSNode n) {
    Stmt *s = out_.make<Stmt>();
    s->kind = k;
    s->range = range(n);
    return s;
  }

  void lower_statement(TSNode n, std::vector<Stmt *> &into, int depth) {
    if (depth > kMaxDepth) {
      note_too_deep(n);
      return;
    }
    switch (kind(n)) {
    case Sym::ExpressionStatement: {
      for_each_named_child(n, [&](TSNode c) {
        Sym k = kind(c);
        if (k == Sym::Assignment || k == Sym::AugmentedAssignment) {
          lower_assignment(c, into, depth);
        } else {
          Stmt *s = make_stmt(StmtKind::Expr, n);
          s->value = lower_expr(c, depth);
          into.push_back(s);
        }
      });
      return;
    }
    case Sym::IfStatement:
    case Sym::ElifClause: {
      Stmt *s = make_stmt(StmtKind::If, n);
      s->value = lower_expr(field(n, sym_.condition), depth);
      lower_block(field(n, sym_.consequence), s->body, depth);
      // Alternatives are siblings in the tree: fold them into a chain of nested Ifs.
      std::vector<TSNode> alternatives;
      for_each_child(n, [&](TSNode c) {
        if (kind(c) == Sym::ElifClause || kind(c) == Sym::ElseClause)
          alternatives.push_back(c);
      });
      std::vector<Stmt *> *tail = &s->orelse;
      for (TSNode alt : alternatives) {
        if (kind(alt) == Sym::ElseClause) {
          lower_block(field(alt, sym_.body), *tail, depth);
        } else {
          Stmt *elif = make_stmt(StmtKind::If, alt);
          elif->value = lower_expr(field(alt, sym_.condition), depth);
          lower_block(field(alt, sym_.consequence), elif->body, depth);
          tail->push_back(elif);
          tail = &elif->orelse;
        }
      }
      into.push_back(s);
      return;
    }
    case Sym::ForStatement: {
      Stmt *s = make_stmt(StmtKind::For, n);
      s->targets.push_back(lower_expr(field(n, sym_.left), depth));
      s->value = lower_expr(field(n, sym_.right), depth);
      lower_block(field(n, sym_.body), s->body, depth);
      TSNode alt = field(n, sym_.alternative);
      if (!ts_node_is_null(alt))
        lower_block(field(alt, sym_.body), s->orelse, depth);
      into.push_back(s);
      return;
    }
    case Sym::WhileStatement: {
      Stmt *s = make_stmt(StmtKind::While, n);
      s->value = lower_expr(field(n, sym_.condition), depth);
      lower_block(field(n, sym_.body), s->body, depth);
      TSNode alt = field(n, sym_.alternative);
      if (!ts_node_is_null(alt))
        lower_block(field(alt, sym_.body), s->orelse, depth);
      into.push_back(s);
      return;
    }
    case Sym::WithStatement: {
      Stmt *s = make_stmt(StmtKind::With, n);
      for_each_named_child(n, [&](TSNode c) {
        if (kind(c) != Sym::WithClause)
          return;
        for_each_named_child(c, [&](TSNode item) {
          TSNode v = field(item, sym_.value);
          if (ts_node_is_null(v))
            return;
          if (kind(v) == Sym::AsPattern) {
            TSNode expr = ts_node_named_child(v, 0);
            s->items.push_back(lower_expr(expr, depth));
            TSNode target = field(v, sym_.alias);
            if (!ts_node_is_null(target))
              s->targets.push_back(lower_expr(ts_node_named_child(target, 0), depth));
          } else {
            s->items.push_back(lower_expr(v, depth));
          }
        });
      });
      lower_block(field(n, sym_.body), s->body, depth);
      into.push_back(s);
      return;
    }
    case Sym::TryStatement: {
      Stmt *s = make_stmt(StmtKind::Try, n);
      lower_block(field(n, sym_.body), s->body, depth);
      for_each_named_child(n, [&](TSNode c) {
        Sym k = kind(c);
        if (k == Sym::ExceptClause || k == Sym::ExceptGroupClause) {
          s->handlers.emplace_back();
          s->handler_types.emplace_back();
          for_each_named_child(c, [&](TSNode b) {
            if (kind(b) == Sym::Block)
              lower_block(b, s->handlers.back(), depth);
            else if (s->handler_types.back().empty())
              s->handler_types.back() =
                  text(kind(b) == Sym::AsPattern ? ts_node_named_child(b, 0) : b);
          });
        } else if (k == Sym::ElseClause) {
          lower_block(field(c, sym_.body), s->orelse, depth);
        } else if (k == Sym::FinallyClause) {
          for_each_named_child(c, [&](TSNode b) {
            if (kind(b) == Sym::Block)
              lower_block(b, s->finalbody, depth);
          });
        }
      });
      into.push_back(s);
      return;
    }
    case Sym::ReturnStatement: {
      Stmt *s = make_stmt(StmtKind::Return, n);
      if (ts_node_named_child_count(n) > 0)
        s->value = lower_expr(ts_node_named_child(n, 0), depth);
      into.push_back(s);
      return;
    }
    case Sym::RaiseStatement: {
      into.push_back(make_stmt(StmtKind::Raise, n));
      return;
    }
    case Sym::DeleteStatement: {
      Stmt *s = make_stmt(StmtKind::Delete, n);
      into.push_back(s);
      return;
    }
    case Sym::FunctionDefinition: {
      Stmt *s = make_stmt(StmtKind::FunctionDef, n);
      s->function = lower_function(n, n, depth);
      into.push_back(s);
      return;
    }
    case Sym::ClassDefinition: {
      Stmt *s = make_stmt(StmtKind::ClassDef, n);
      s->class_def = lower_class(n, depth);
      into.push_back(s);
      return;
    }
    case Sym::DecoratedDefinition: {
      TSNode def = field(n, sym_.definition);
      if (ts_node_is_null(def))
        return;
      if (kind(def) == Sym::FunctionDefinition) {
        Stmt *s = make_stmt(StmtKind::FunctionDef, n);
        s->function = lower_function(def, n, depth);
        for_each_named_child(n, [&](TSNode c) {
          if (kind(c) == Sym::Decorator && ts_node_named_child_count(c) > 0) {
            Expr *d = lower_expr(ts_node_named_child(c, 0), depth);
            s->function->decorators.push_back(d);
            if (is_name(d, "staticmethod"))
              s->function->is_staticmethod = true;
            if (is_name(d, "property") || is_name(d, "cached_property") ||
                dotted_name(d) == "functools.cached_property")
              s->function->is_property = true;
            if (is_name(d, "classmethod"))
              s->function->is_classmethod = true;
          }
        });
        into.push_back(s);
      } else if (kind(def) == Sym::ClassDefinition) {
        Stmt *s = make_stmt(StmtKind::ClassDef, n);
        s->class_def = lower_class(def, depth);
        for_each_named_child(n, [&](TSNode c) {
          if (kind(c) == Sym::Decorator && ts_node_named_child_count(c) > 0)
            s->class_def->decorators.push_back(lower_expr(ts_node_named_child(c, 0), depth));
        });
        into.push_back(s);
      }
      return;
    }
    case Sym::ImportFromStatement:
      lower_import_from(n);
      return;
    case Sym::ImportStatement:
      lower_import(n);
      return;
    case Sym::Error:
      // Salvage statements inside an ERROR node: tree-sitter often wraps valid code around
      // the broken part.
      for_each_named_child(n, [&](TSNode c) {
        Sym k = kind(c);
        if (k == Sym::ExpressionStatement || k == Sym::IfStatement || k == Sym::ForStatement ||
            k == Sym::ReturnStatement || k == Sym::FunctionDefinition ||
            k == Sym::ClassDefinition || k == Sym::DecoratedDefinition)
          lower_statement(c, into, depth + 1);
      });
      return;
    default: {
      Stmt *s = make_stmt(StmtKind::Other, n);
      into.push_back(s);
      return;
    }
    }
  }

  void lower_assignment(TSNode n, std::vector<Stmt *> &into, int depth) {
    if (kind(n) == Sym::AugmentedAssignment) {
      Stmt *s = make_stmt(StmtKind::AugAssign, n);
      s->targets.push_back(lower_expr(field(n, sym_.left), depth));
      s->value = lower_expr(field(n, sym_.right), depth);
      std::string_view op = text(field(n, sym_.operator_));
      if (!op.empty() && op.back() == '=')
        op.remove_suffix(1);
      s->text = op;
      into.push_back(s);
      return;
    }
    // a = b = value is a right-nested chain of assignments.
    Stmt *s = make_stmt(StmtKind::Assign, n);
    TSNode type = field(n, sym_.type);
    if (!ts_node_is_null(type))
      s->annotation = text(type);
    TSNode current = n;
    while (!ts_node_is_null(current) && kind(current) == Sym::Assignment) {
      s->targets.push_back(lower_expr(field(current, sym_.left), depth));
      TSNode right = field(current, sym_.right);
      if (ts_node_is_null(right) || kind(right) != Sym::Assignment) {
        if (!ts_node_is_null(right))
          s->value = lower_expr(right, depth);
        break;
      }
      current = right;
    }
    into.push_back(s);
  }

  FunctionDef *lower_function(TSNode n, TSNode whole, int depth) {
    FunctionDef *f = out_.make<FunctionDef>();
    TSNode name = field(n, sym_.name);
    f->name = text(name);
    f->name_range = range(name);
    f->range = range(whole);
    TSNode params = field(n, sym_.parameters);
    if (!ts_node_is_null(params))
      lower_parameters(params, f->parameters, depth);
    TSNode returns = field(n, sym_.return_type);
    if (!ts_node_is_null(returns))
      f->returns = text(returns);
    lower_block(field(n, sym_.body), f->body, depth);
    return f;
  }

  void lower_parameters(TSNode params, std::vector<Parameter> &out, int depth) {
    for_each_named_child(params, [&](TSNode p) {
      Parameter param;
      param.range = range(p);
      switch (kind(p)) {
      case Sym::Identifier:
        param.name = text(p);
        break;
      case Sym::DefaultParameter:
      case Sym::TypedDefaultParameter:
        param.name = text(field(p, sym_.name));
        param.default_value = lower_expr(field(p, sym_.value), depth);
        if (!ts_node_is_null(field(p, sym_.type)))
          param.annotation = text(field(p, sym_.type));
        break;
      case Sym::TypedParameter: {
        TSNode inner = ts_node_named_child(p, 0);
        if (!ts_node_is_null(field(p, sym_.type)))
          param.annotation = text(field(p, sym_.type));
        if (kind(inner) == Sym::Identifier) {
          param.name = text(inner);
        } else {
          param.variadic = true;
          if (ts_node_named_child_count(inner) > 0)
            param.name = text(ts_node_named_child(inner, 0));
        }
        break;
      }
      case Sym::ListSplatPattern:
      case Sym::DictionarySplatPattern:
        param.variadic = true;
        if (ts_node_named_child_count(p) > 0)
          param.name = text(ts_node_named_child(p, 0));
        break;
      default:
        return;
      }
      if (!param.name.empty())
        out.push_back(param);
    });
  }

  ClassDef *lower_class(TSNode n, int depth) {
    ClassDef *c = out_.make<ClassDef>();
    c->name = text(field(n, sym_.name));
    c->range = range(n);
    TSNode supers = field(n, sym_.superclasses);
    if (!ts_node_is_null(supers)) {
      for_each_named_child(supers, [&](TSNode b) {
        if (kind(b) != Sym::KeywordArgument)
          c->bases.push_back(lower_expr(b, depth));
      });
    }
    lower_block(field(n, sym_.body), c->body, depth);
    for (Stmt *s : c->body) {
      if (s->kind == StmtKind::FunctionDef) {
        c->methods.push_back(s->function);
      }
    }
    return c;
  }

  void lower_import_from(TSNode n) {
    TSNode module = field(n, sym_.module_name);
    std::string_view module_text = ts_node_is_null(module) ? std::string_view() : text(module);
    for_each_named_child(n, [&](TSNode c) {
      if (ts_node_eq(c, module))
        return;
      ImportedName imported;
      imported.module = module_text;
      if (kind(c) == Sym::AliasedImport) {
        imported.name = text(field(c, sym_.name));
        imported.local_name = text(field(c, sym_.alias));
      } else if (kind(c) == Sym::DottedName) {
        imported.name = text(c);
        imported.local_name = imported.name;
      } else if (std::strcmp(ts_node_type(c), "wildcard_import") == 0) {
        imported.name = "*"; // `from .modeling_llama import *`: followed by search paths
      } else {
        return;
      }
      out_.imports.push_back(imported);
    });
  }

  void lower_import(TSNode n) {
    for_each_named_child(n, [&](TSNode c) {
      ImportedName imported;
      if (kind(c) == Sym::AliasedImport) {
        imported.module = text(field(c, sym_.name));
        imported.local_name = text(field(c, sym_.alias));
      } else if (kind(c) == Sym::DottedName) {
        imported.module = text(c);
        imported.local_name = text(c);
      } else {
        return;
      }
      out_.imports.push_back(imported);
    });
  }

  // ---- expressions ----

  Expr *lower_expr(TSNode n, int depth) {
    if (ts_node_is_null(n))
      return nullptr;
    if (depth > kMaxDepth) {
      note_too_deep(n);
      return make_expr(ExprKind::Other, n);
    }
    ++depth;
    switch (kind(n)) {
    case Sym::Identifier: {
      Expr *e = make_expr(ExprKind::Name, n);
      e->text = text(n);
      return e;
    }
    case Sym::Attribute: {
      Expr *e = make_expr(ExprKind::Attribute, n);
      e->operands.push_back(lower_expr(field(n, sym_.object), depth));
      e->text = text(field(n, sym_.attribute));
      if (!e->operands[0])
        e->kind = ExprKind::Other;
      return e;
    }
    case Sym::Subscript: {
      Expr *e = make_expr(ExprKind::Subscript, n);
      TSNode value = field(n, sym_.value);
      e->operands.push_back(lower_expr(value, depth));
      if (!e->operands[0])
        return make_expr(ExprKind::Other, n);
      for_each_child(n, [&](TSNode c) {
        if (ts_node_is_named(c) && kind(c) != Sym::Comment && !ts_node_eq(c, value)) {
          if (Expr *index = lower_expr(c, depth))
            e->operands.push_back(index);
        }
      });
      return e;
    }
    case Sym::Call: {
      Expr *e = make_expr(ExprKind::Call, n);
      Expr *callee = lower_expr(field(n, sym_.function), depth);
      if (!callee)
        return make_expr(ExprKind::Other, n);
      e->operands.push_back(callee);
      TSNode args = field(n, sym_.arguments);
      if (!ts_node_is_null(args)) {
        if (kind(args) == Sym::GeneratorExpression) {
          e->operands.push_back(lower_expr(args, depth));
        } else {
          for_each_named_child(args, [&](TSNode a) {
            if (kind(a) == Sym::KeywordArgument) {
              Keyword k;
              k.name = text(field(a, sym_.name));
              k.value = lower_expr(field(a, sym_.value), depth);
              if (k.value)
                e->keywords.push_back(k);
            } else if (kind(a) == Sym::DictionarySplat) {
              Keyword k;
              k.value = lower_expr(ts_node_named_child(a, 0), depth);
              if (k.value)
                e->keywords.push_back(k);
            } else if (Expr *arg = lower_expr(a, depth)) {
              e->operands.push_back(arg);
            }
          });
        }
      }
      // The callee's leaf name, for quick dispatch: `torch.cat` -> "cat".
      e->text = callee->kind == ExprKind::Name || callee->kind == ExprKind::Attribute
                    ? callee->text
                    : std::string_view();
      return e;
    }
    case Sym::BinaryOperator: {
      Expr *e = make_expr(ExprKind::BinaryOp, n);
      e->text = text(field(n, sym_.operator_));
      return with_operands(e, {field(n, sym_.left), field(n, sym_.right)}, depth);
    }
    case Sym::ComparisonOperator: {
      Expr *e = make_expr(ExprKind::Compare, n);
      std::vector<TSNode> operands;
      for_each_child(n, [&](TSNode c) {
        if (ts_node_is_named(c) && kind(c) != Sym::Comment)
          operands.push_back(c);
        else if (e->text.empty() && !ts_node_is_named(c))
          e->text = text(c);
      });
      if (operands.size() > 2)
        operands.resize(2);
      return with_operands(e, operands, depth);
    }
    case Sym::UnaryOperator: {
      Expr *e = make_expr(ExprKind::UnaryOp, n);
      e->text = text(field(n, sym_.operator_));
      return with_operands(e, {field(n, sym_.argument)}, depth);
    }
    case Sym::NotOperator: {
      Expr *e = make_expr(ExprKind::BoolOp, n);
      e->text = "not";
      return with_operands(e, {field(n, sym_.argument)}, depth);
    }
    case Sym::BooleanOperator: {
      Expr *e = make_expr(ExprKind::BoolOp, n);
      e->text = text(field(n, sym_.operator_));
      return with_operands(e, {field(n, sym_.left), field(n, sym_.right)}, depth);
    }
    case Sym::ConditionalExpression: {
      Expr *e = make_expr(ExprKind::Conditional, n);
      std::vector<TSNode> parts;
      for_each_named_child(n, [&](TSNode c) { parts.push_back(c); });
      if (parts.size() != 3)
        return make_expr(ExprKind::Other, n);
      return with_operands(e, parts, depth);
    }
    case Sym::Tuple:
    case Sym::List:
    case Sym::Set:
    case Sym::ExpressionList:
    case Sym::PatternList:
    case Sym::TuplePattern:
    case Sym::ListPattern: {
      Expr *e = make_expr(ExprKind::Tuple, n);
      e->text = kind(n) == Sym::List || kind(n) == Sym::ListPattern ? "list"
                : kind(n) == Sym::Set                               ? "set"
                                                                    : "tuple";
      for_each_named_child(n, [&](TSNode c) {
        if (Expr *x = lower_expr(c, depth))
          e->operands.push_back(x);
      });
      return e;
    }
    case Sym::Dictionary: {
      Expr *e = make_expr(ExprKind::Dict, n);
      for_each_named_child(n, [&](TSNode c) {
        if (kind(c) == Sym::Pair) {
          Expr *v = lower_expr(field(c, sym_.value), depth);
          Expr *k = lower_expr(field(c, sym_.key), depth);
          if (v) {
            e->operands.push_back(v);
            e->keywords.push_back(Keyword{{}, k ? k : make_expr(ExprKind::Other, c)});
          }
        }
      });
      return e;
    }
    case Sym::ParenthesizedExpression: {
      // `(  # why\n  A(config) if flag else B(config))`: the comment is a named child too.
      TSNode inner{};
      bool found = false;
      for_each_named_child(n, [&](TSNode c) {
        if (!found) {
          inner = c;
          found = true;
        }
      });
      if (!found)
        return make_expr(ExprKind::Other, n);
      return lower_expr(inner, depth);
    }
    case Sym::Integer:
    case Sym::Float:
      return make_expr(ExprKind::Number, n);
    case Sym::String:
    case Sym::ConcatenatedString: {
      Expr *e = make_expr(ExprKind::String, n);
      std::string_view t = text(n);
      // Strip prefixes and quotes: enough to read device literals like "cuda:0".
      size_t q = t.find_first_of("\"'");
      if (q != std::string_view::npos && t.size() >= q + 2) {
        char quote = t[q];
        size_t close = t.rfind(quote);
        size_t begin = q + 1;
        while (begin < close && t[begin] == quote)
          ++begin;
        size_t end = close;
        while (end > begin && t[end - 1] == quote)
          --end;
        if (end >= begin)
          e->text = t.substr(begin, end - begin);
      }
      return e;
    }
    case Sym::True:
    case Sym::False: {
      Expr *e = make_expr(ExprKind::Bool, n);
      e->text = kind(n) == Sym::True ? "True" : "False";
      return e;
    }
    case Sym::None:
      return make_expr(ExprKind::NoneLiteral, n);
    case Sym::Slice: {
      Expr *e = make_expr(ExprKind::Slice, n);
      for_each_named_child(n, [&](TSNode c) {
        if (Expr *x = lower_expr(c, depth))
          e->operands.push_back(x);
      });
      return e;
    }
    case Sym::ListSplat:
    case Sym::ListSplatPattern:
    case Sym::DictionarySplat: {
      Expr *e = make_expr(ExprKind::Starred, n);
      if (ts_node_named_child_count(n) == 0)
        return e;
      return with_operands(e, {ts_node_named_child(n, 0)}, depth);
    }
    case Sym::Lambda:
      return make_expr(ExprKind::Lambda, n);
    case Sym::ListComprehension:
    case Sym::GeneratorExpression:
    case Sym::SetComprehension:
    case Sym::DictionaryComprehension: {
      Expr *e = make_expr(ExprKind::Comprehension, n);
      e->text = kind(n) == Sym::ListComprehension ? "list" : "generator";
      // `{k: v for ...}` yields its values.
      TSNode body = field(n, sym_.body);
      Expr *element = lower_expr(kind(body) == Sym::Pair ? field(body, sym_.value) : body, depth);
      // `for layer_past in past for state in layer_past`: each further clause is a
      // comprehension nested in the element of the one before.
      // Each `if` filters the items of the `for` clause before it: operands[3...] of that
      // clause's comprehension are its conditions.
      std::vector<std::pair<Expr *, Expr *>> clauses; // (iterated, target)
      std::vector<std::vector<Expr *>> conditions;
      for_each_named_child(n, [&](TSNode c) {
        if (kind(c) == Sym::ForInClause) {
          clauses.emplace_back(lower_expr(field(c, sym_.right), depth),
                               lower_expr(field(c, sym_.left), depth));
          conditions.emplace_back();
        } else if (kind(c) == Sym::IfClause && !conditions.empty()) {
          for_each_named_child(c, [&](TSNode condition) {
            conditions.back().push_back(lower_expr(condition, depth));
          });
        }
      });
      if (!element || clauses.empty())
        return make_expr(ExprKind::Other, n);
      for (size_t i = clauses.size(); i-- > 1;) {
        if (!clauses[i].first || !clauses[i].second)
          return make_expr(ExprKind::Other, n);
        Expr *inner = make_expr(ExprKind::Comprehension, n);
        inner->text = "generator";
        inner->operands = {element, clauses[i].first, clauses[i].second};
        for (Expr *condition : conditions[i])
          if (condition)
            inner->operands.push_back(condition);
        element = inner;
      }
      if (!clauses[0].first || !clauses[0].second)
        return make_expr(ExprKind::Other, n);
      e->operands = {element, clauses[0].first, clauses[0].second};
      for (Expr *condition : conditions[0])
        if (condition)
          e->operands.push_back(condition);
      // `{k: v for ...}` over one clause keeps its key too (keywords[0], unnamed), so a dict can
      // be built from it.
      if (kind(body) == Sym::Pair && clauses.size() == 1)
        if (Expr *key = lower_expr(field(body, sym_.key), depth)) {
          e->text = "dict";
          e->keywords.push_back(Keyword{std::string_view(), key});
        }
      return e;
    }
    case Sym::NamedExpression: {
      // (x := value) reads as its value, which also binds x.
      Expr *value = lower_expr(field(n, sym_.value), depth);
      TSNode name = field(n, sym_.name);
      if (value && !ts_node_is_null(name) && kind(name) == Sym::Identifier)
        value->binds = text(name);
      return value;
    }
    case Sym::Await:
      if (ts_node_named_child_count(n) > 0)
        return lower_expr(ts_node_named_child(n, 0), depth);
      return make_expr(ExprKind::Other, n);
    case Sym::KeywordArgument:
      return lower_expr(field(n, sym_.value), depth);
    default:
      return make_expr(ExprKind::Other, n);
    }
  }

  Expr *with_operands(Expr *e, std::initializer_list<TSNode> nodes, int depth) {
    for (TSNode c : nodes) {
      Expr *x = lower_expr(c, depth);
      if (!x)
        x = make_expr(ExprKind::Other, c);
      e->operands.push_back(x);
    }
    return e;
  }
  Expr *with_operands(Expr *e, const std::vector<TSNode> &nodes, int depth) {
    for (TSNode c : nodes) {
      Expr *x = lower_expr(c, depth);
      if (!x)
        x = make_expr(ExprKind::Other, c);
      e->operands.push_back(x);
    }
    return e;
  }
};

struct ParserDeleter {
  void operator()(TSParser *p) const { ts_parser_delete(p); }
};

} // namespace

std::unique_ptr<SyntaxFile> lower_parsed_python(const SourceFile &source, const TSTree *tree) {
  auto out = std::make_unique<SyntaxFile>();
  out->source = &source;
  if (!tree)
    return out;
  Lowering lowering(source, *out);
  TSNode root = ts_tree_root_node(tree);
  lowering.lower_module(root);
  out->syntax_errors = find_python_syntax_errors(root, source.text);
  return out;
}

SourceRange node_range(TSNode n) {
  SourceRange r;
  r.begin = ts_node_start_byte(n);
  r.end = ts_node_end_byte(n);
  TSPoint a = ts_node_start_point(n), b = ts_node_end_point(n);
  r.line = a.row + 1;
  r.column = a.column + 1;
  r.end_line = b.row + 1;
  r.end_column = b.column + 1;
  return r;
}

const std::string *python_parse_text(const std::string &text, std::string &storage) {
  // tree-sitter's Python scanner takes a lone CR (classic Mac OS line ending) for a blank, so
  // such a file would parse as one line. Parse a copy with each lone CR turned into LF: the same
  // length, so every byte offset, and the line numbers SourceFile counts, stay the same.
  const std::string *parsed = &text;
  for (size_t cr = text.find('\r'); cr != std::string::npos; cr = text.find('\r', cr + 1)) {
    if (cr + 1 < text.size() && text[cr + 1] == '\n')
      continue;
    if (storage.empty())
      storage = text;
    storage[cr] = '\n';
    parsed = &storage;
  }
  return parsed;
}

std::unique_ptr<SyntaxFile> lower_python(const SourceFile &source) {
  // One parser per thread: parsers are not thread-safe, but cheap to keep.
  thread_local std::unique_ptr<TSParser, ParserDeleter> parser = [] {
    std::unique_ptr<TSParser, ParserDeleter> p(ts_parser_new());
    ts_parser_set_language(p.get(), tree_sitter_python());
    return p;
  }();
  std::string lone_cr_as_lf;
  const std::string *text = python_parse_text(source.text, lone_cr_as_lf);
  // A UTF-8 byte order mark is not Python: parse from the byte after it, so offsets stay those
  // of the file.
  const bool bom = text->compare(0, 3, "\xEF\xBB\xBF") == 0;
  if (bom) {
    TSRange after_bom{{0, 3}, {UINT32_MAX, UINT32_MAX}, 3, UINT32_MAX};
    ts_parser_set_included_ranges(parser.get(), &after_bom, 1);
  }
  TSTree *tree = ts_parser_parse_string(parser.get(), nullptr, text->data(),
                                        static_cast<uint32_t>(text->size()));
  if (bom)
    ts_parser_set_included_ranges(parser.get(), nullptr, 0);
  auto out = lower_parsed_python(source, tree);
  if (tree)
    ts_tree_delete(tree);
  return out;
}

} // namespace devlint
