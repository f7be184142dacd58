// Site emission: turning an operation and its operands' origins into a Site for the sink, and
// hard-coded devices into sites of their own.
#include "placement/interpreter.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/text.h"
#include "model/torch_catalog.h"
#include "placement/capability_probes.h"
#include "placement/condition_text.h"

namespace devlint {

const OriginSet *Interpreter::emit_statement_site(Site &site) {
  if (frame_->statement && frame_->statement->kind == StmtKind::AugAssign) {
    Expr &whole = statement_exprs_[frame_->statement];
    whole.range = frame_->statement->range;
    site.expr = &whole;
  }
  return emit(site);
}

void Interpreter::note_probe_hit(const Expr *use) {
  if (cpu_probe_hit_)
    return; // the first use tells
  cpu_probe_hit_ = true;
  cpu_probe_use_ = {use, frame_->file, call_stack_.empty() ? nullptr : call_stack_.back(),
                    frame_->unit};
}

bool Interpreter::probe_meets_model(const Site &site) const {
  auto probed = [this](const Origin *o) {
    return std::find(cpu_probe_->begin(), cpu_probe_->end(), o) != cpu_probe_->end();
  };
  // After `parallelize()` the probed tensors are on a GPU too: only the block's own tensors
  // meet them apart, not a tensor moved to where a probed one is
  // (`self.embed_positions.to(position_ids.device)` holds copies of `position_ids`' origins).
  const bool on_gpu_too = hand_parallel_run_;
  auto moved_to_probed = [this](const Origin *o) {
    return !o->moved_to.empty() &&
           std::any_of(cpu_probe_->begin(), cpu_probe_->end(), [o](const Origin *p) {
             return p->kind == o->kind && p->label == o->label &&
                    p->range.begin == o->range.begin && p->file == o->file;
           });
  };
  auto on_a_gpu = [&](const Origin *o) {
    return !o->has(OriginFact::MaybeNotTensor) && o->kind != OriginKind::Fresh &&
           o->kind != OriginKind::PlainTensor && o->kind != OriginKind::Skip &&
           o->kind != OriginKind::LiteralDevice &&
           !(on_gpu_too && (probed(o) || moved_to_probed(o)));
  };
  for (size_t i = 0; i < site.operands.size(); ++i) {
    const SiteOperand &handed = site.operands[i];
    // PyTorch accepts a CPU index for a tensor on any device.
    if (handed.role == OperandRole::Index ||
        std::none_of(handed.origins.begin(), handed.origins.end(), probed))
      continue;
    for (size_t j = 0; j < site.operands.size(); ++j)
      if (j != i &&
          std::any_of(site.operands[j].origins.begin(), site.operands[j].origins.end(), on_a_gpu))
        return true;
  }
  return false;
}

namespace {

// The `if` of `init` that builds what starts at `where` in its body (true) or its else branch.
std::optional<std::pair<const Expr *, bool>> construction_guard(const std::vector<Stmt *> &body,
                                                                uint32_t where, int depth = 0) {
  if (depth > 64)
    return std::nullopt;
  for (const Stmt *s : body) {
    if (where < s->range.begin || where >= s->range.end)
      continue;
    if (s->kind != StmtKind::If)
      return std::nullopt; // built outside any `if` of the constructor: always
    auto in = [&](const std::vector<Stmt *> &branch) {
      return std::any_of(branch.begin(), branch.end(), [&](const Stmt *b) {
        return b->range.begin <= where && where < b->range.end;
      });
    };
    bool in_body = in(s->body);
    const std::vector<Stmt *> &branch = in_body ? s->body : s->orelse;
    if (auto inner = construction_guard(branch, where, depth + 1))
      return inner;
    // Directly in this branch (not under a deeper `if`).
    return std::make_pair(static_cast<const Expr *>(s->value), in_body);
  }
  return std::nullopt;
}

// A construction guard as the constructor spells it: its test, or `not (test)` for what the
// `else` branch builds.
std::string spelled_guard(const SyntaxFile &file, const std::pair<const Expr *, bool> &guard) {
  std::string code = printable(file.source->slice(guard.first->range));
  return guard.second ? code : "not (" + code + ")";
}

} // namespace

const std::vector<std::pair<std::string, bool>> &
Interpreter::weighted_child_guards(const ModuleClass *unit) const {
  auto [it, fresh] = weighted_child_guards_.try_emplace(unit);
  if (!fresh)
    return it->second;
  const FunctionDef *init = nullptr;
  for (const FunctionDef *m : unit->def->methods)
    if (m->name == "__init__")
      init = m;
  std::vector<std::pair<std::string, bool>> guards;
  for (const ChildDecl *child : unit->all_children()) {
    if (!child->has_parameters)
      continue;
    auto guard = init ? construction_guard(init->body, child->range.begin) : std::nullopt;
    if (!guard || !guard->first ||
        guard->first->range.end - guard->first->range.begin > kMaxConditionText)
      return it->second; // a weighted child built unconditionally, or under no flag test
    guards.emplace_back(condition_text(*unit->file, guard->first), guard->second);
  }
  it->second = std::move(guards);
  return it->second;
}

bool Interpreter::branch_excludes_weighted_children() const {
  const ModuleClass *unit = frame_->unit;
  // The conditions are compared as text of the unit's own file.
  if (!unit || frame_->assumed.empty() || !unit->def || !unit->file || frame_->file != unit->file)
    return false;
  const auto &guards = weighted_child_guards(unit);
  if (guards.empty())
    return false;
  std::vector<std::pair<std::string, bool>> assumed;
  for (const auto &[condition, taken] : frame_->assumed)
    if (condition && condition->range.end - condition->range.begin <= kMaxConditionText)
      assumed.emplace_back(condition_text(*unit->file, condition), taken);
  return std::all_of(guards.begin(), guards.end(), [&](const auto &guard) {
    // Not a structured binding: clang before 16 cannot capture one in a lambda.
    const std::string &built_if = guard.first;
    const bool built_in_body = guard.second;
    return std::any_of(assumed.begin(), assumed.end(), [&](const auto &here) {
      return (here.first == built_if && here.second != built_in_body) ||
             (negates(here.first, built_if) && here.second == built_in_body);
    });
  });
}

namespace {

// `config.Y`, `self.config.Y` or `getattr(config, "Y", default)`: "Y"; empty for anything else.
std::string configuration_attribute(const Expr *e) {
  if (!e)
    return "";
  auto is_config = [](const Expr *holder) {
    return (holder->kind == ExprKind::Name && holder->text == "config") ||
           (holder->kind == ExprKind::Attribute && holder->text == "config" &&
            holder->operands[0]->kind == ExprKind::Name && holder->operands[0]->text == "self");
  };
  if (e->kind == ExprKind::Call && e->operands.size() >= 3 &&
      e->operands[0]->kind == ExprKind::Name && e->operands[0]->text == "getattr" &&
      is_config(e->operands[1]) && e->operands[2]->kind == ExprKind::String)
    return std::string(e->operands[2]->text);
  if (e->kind != ExprKind::Attribute)
    return "";
  return is_config(e->operands[0]) ? std::string(e->text) : "";
}

// What configuration attribute `self.<name>` comes from in the class's own `__init__`: the
// `config.Y` every assignment to it copies (`self.rotary_value = config.rotary_value`), or, for
// a child, the `config.Y` (or `not config.Y`) it is built under, with the truth that builds it.
void find_configuration_source(const ModuleClass &unit, const std::string &name,
                               RunCondition &test) {
  const FunctionDef *init = nullptr;
  if (unit.def)
    for (const FunctionDef *m : unit.def->methods)
      if (m->name == "__init__")
        init = m;
  if (!init)
    return;
  // `self.<name>` is built under a test of `config.Y` (true: where it holds), else None.
  auto built_under = [&](const Expr *condition, bool built_when) {
    if (condition->kind == ExprKind::BoolOp && condition->text == "not" &&
        condition->operands.size() == 1) {
      condition = condition->operands[0];
      built_when = !built_when;
    }
    std::string key = configuration_attribute(condition);
    if (key.empty())
      return;
    // `self.x is None` holds where it was not built; `is not None` and its truth where it was.
    bool wants_built =
        (test.comparison == "is not" && test.literal == "null") || test.comparison.empty();
    if (!test.comparison.empty() &&
        !((test.comparison == "is" || test.comparison == "is not") && test.literal == "null"))
      return;
    test.config_key = key;
    test.config_truth = (wants_built == test.holds) == built_when;
  };
  // `self.x = nn.Parameter(...) if config.Y else None`
  if (const Stmt *assignment = find_statement(init->body, [&](const Stmt *st) {
        return st->kind == StmtKind::Assign && st->value &&
               st->value->kind == ExprKind::Conditional && st->value->operands.size() == 3 &&
               std::any_of(st->targets.begin(), st->targets.end(),
                           [&](const Expr *target) { return is_self_attribute(target, name); });
      })) {
    const Expr *choice = assignment->value;
    bool none_else = choice->operands[2]->kind == ExprKind::NoneLiteral;
    bool none_body = choice->operands[0]->kind == ExprKind::NoneLiteral;
    if (none_else != none_body)
      built_under(choice->operands[1], none_else);
    return;
  }
  for (const ChildDecl *child : unit.all_children()) {
    if (child->name != name)
      continue;
    auto guard = construction_guard(init->body, child->range.begin);
    if (!guard || !guard->first)
      return;
    built_under(guard->first, guard->second);
    return;
  }
  // `if config.use_mask_token: self.mask_token = nn.Parameter(...)`, `else: ... = None`.
  for (const ParameterDecl *param : unit.all_parameters()) {
    if (param->name != name)
      continue;
    auto guard = construction_guard(init->body, param->range.begin);
    if (guard && guard->first)
      built_under(guard->first, guard->second);
    return;
  }
  // `num_labels = getattr(config, "num_labels", 2)` then `self.num_labels = num_labels`: a local
  // `__init__` assigns once from the configuration stands for that setting.
  auto local_configuration_attribute = [&](const Expr *value) -> std::string {
    if (!value || value->kind != ExprKind::Name)
      return "";
    std::string from;
    size_t assignments = 0;
    find_statement(init->body, [&](const Stmt *st) {
      if (st->kind != StmtKind::Assign && st->kind != StmtKind::AugAssign)
        return false;
      for (const Expr *target : st->targets)
        if (target->kind == ExprKind::Name && target->text == value->text) {
          ++assignments;
          from = st->kind == StmtKind::Assign ? configuration_attribute(st->value) : "";
        }
      return false;
    });
    return assignments == 1 ? from : "";
  };
  std::string key;
  bool assigned = false;
  find_statement(init->body, [&](const Stmt *st) {
    if (st->kind != StmtKind::Assign)
      return false;
    for (const Expr *target : st->targets)
      if (is_self_attribute(target, name)) {
        std::string from = configuration_attribute(st->value);
        if (from.empty())
          from = local_configuration_attribute(st->value);
        if (from.empty() || (assigned && from != key)) {
          key.clear();
          return true; // assigned something else too: not one setting
        }
        key = from;
        assigned = true;
      }
    return false;
  });
  test.config_key = key;
}

// Whether a method of the class other than `__init__` assigns `self.<path>` (`self.config.
// problem_type = "regression"` in a forward that picks the loss): then it is no setting.
bool rebound_after_init(const ModuleClass &unit, const std::vector<std::string> &path) {
  if (!unit.def || !unit.file)
    return true;
  std::string written = "self";
  for (const std::string &part : path)
    written += "." + part;
  auto assigns = [&](const Expr *target) {
    return target && target->kind == ExprKind::Attribute &&
           condition_text(*unit.file, target) == written;
  };
  for (const FunctionDef *m : unit.def->methods) {
    if (m->name == "__init__")
      continue;
    if (find_statement(m->body, [&](const Stmt *st) {
          return (st->kind == StmtKind::Assign || st->kind == StmtKind::AugAssign) &&
                 std::any_of(st->targets.begin(), st->targets.end(), assigns);
        }))
      return true;
  }
  return false;
}

// The `if` tests around `where` in `body`, outermost first, each with the branch taken.
void guards_around(const std::vector<Stmt *> &body, uint32_t where,
                   std::vector<std::pair<const Expr *, bool>> &out, int depth = 0) {
  if (depth > 64)
    return;
  for (const Stmt *s : body) {
    if (where < s->range.begin || where >= s->range.end)
      continue;
    auto in = [&](const std::vector<Stmt *> &branch) {
      return std::any_of(branch.begin(), branch.end(), [&](const Stmt *b) {
        return b->range.begin <= where && where < b->range.end;
      });
    };
    if (s->kind == StmtKind::If) {
      bool in_body = in(s->body);
      out.emplace_back(s->value, in_body);
      guards_around(in_body ? s->body : s->orelse, where, out, depth + 1);
    } else {
      guards_around(s->body, where, out, depth + 1);
      guards_around(s->orelse, where, out, depth + 1);
    }
    return;
  }
}

// transformers' sequence-classification heads fill `self.config.problem_type` only where the
// configuration left it None (`if self.config.problem_type is None: if self.num_labels == 1:
// ... = "regression" ...`). A line under `problem_type == "regression"` that also needs
// `self.num_labels == 1` to fail (`else: loss_fct(logits, labels)`) never sees the filled value:
// only a configuration setting it runs the line, so the test stays. True for `test` read in
// `method` under `assumed` when every assignment of its attribute outside `__init__` is such a
// fill in `method` and the fill of the tested value sits under a test `assumed` takes the other
// way.
bool set_only_by_configuration(const ModuleClass &unit, const SyntaxFile &file,
                               const FunctionDef &method,
                               const std::vector<std::pair<const Expr *, bool>> &assumed,
                               const RunCondition &test) {
  if (test.comparison != "==" || !test.holds || test.literal.size() < 2 ||
      test.literal.front() != '"')
    return false;
  std::string written = "self";
  for (const std::string &part : test.attribute)
    written += "." + part;
  // Each statement's text is read from the file that holds it: `method` may be a base's, in
  // another file than the class's own methods.
  auto assigns_in = [&](const SyntaxFile &text) {
    return [&written, &text](const Stmt *st) {
      return st->kind == StmtKind::Assign &&
             std::any_of(st->targets.begin(), st->targets.end(), [&](const Expr *t) {
               return t->kind == ExprKind::Attribute && condition_text(text, t) == written;
             });
    };
  };
  if (unit.file)
    for (const FunctionDef *m : unit.def->methods)
      if (m != &method && m->name != "__init__" && find_statement(m->body, assigns_in(*unit.file)))
        return false;
  auto assigns = assigns_in(file);
  bool found = false, every_fill = true;
  find_statement(method.body, [&](const Stmt *st) {
    if (!assigns(st))
      return false;
    std::vector<std::pair<const Expr *, bool>> guards;
    guards_around(method.body, st->range.begin, guards);
    bool fill = std::any_of(guards.begin(), guards.end(), [&](const auto &g) {
      return g.second && comparison_operator(g.first) == "is" &&
             condition_text(file, g.first->operands[0]) == written &&
             g.first->operands[1]->kind == ExprKind::NoneLiteral;
    });
    every_fill = every_fill && fill;
    const Expr *value = st->value;
    if (!fill || !value || value->kind != ExprKind::String ||
        "\"" + std::string(value->text) + "\"" != test.literal || guards.empty())
      return false;
    // The innermost test the filled value needs, taken the other way where the line runs.
    const Expr *guard = guards.back().first;
    bool way = guards.back().second; // a plain local: lambdas capture no structured binding
    std::string guard_text = condition_text(file, guard);
    found = found || std::any_of(assumed.begin(), assumed.end(), [&](const auto &a) {
              return a.first && a.second != way && condition_text(file, a.first) == guard_text;
            });
    return false;
  });
  return found && every_fill;
}

} // namespace

std::vector<RunCondition> Interpreter::run_conditions() const {
  std::vector<RunCondition> tests;
  const ModuleClass *unit = frame_->unit;
  if (!unit)
    return tests;
  std::vector<char> configured; // per test: only a configuration sets what it reads
  for (const Frame *f = frame_; f && f->unit == unit; f = f->parent) {
    if (!f->file)
      continue;
    for (const auto &[condition, taken] : f->assumed) {
      size_t before = tests.size();
      self_tests_required(*f->file, condition, taken, tests);
      for (size_t i = before; i < tests.size(); ++i)
        configured.push_back(
            f->function && unit->def &&
            set_only_by_configuration(*unit, *f->file, *f->function, f->assumed, tests[i]));
    }
  }
  std::vector<RunCondition> kept;
  for (size_t i = 0; i < tests.size(); ++i)
    if (configured[i] || !rebound_after_init(*unit, tests[i].attribute))
      kept.push_back(std::move(tests[i]));
  tests = std::move(kept);
  for (RunCondition &test : tests) {
    if (!test.subscript.empty())
      continue; // one element of a setting: no keyword sets it alone
    if (test.attribute.size() == 2 && test.attribute[0] == "config")
      test.config_key = test.attribute[1];
    else if (test.attribute.size() == 1) {
      find_configuration_source(*unit, test.attribute[0], test);
      if (test.config_key.empty() && !test.config_truth)
        test.config_key = constructor_argument_setting(unit, test.attribute[0]);
    }
  }
  return tests;
}

const std::string &Interpreter::constructor_argument_setting(const ModuleClass *unit,
                                                             const std::string &name) const {
  auto [it, fresh] = constructor_argument_settings_.try_emplace({unit, name});
  if (!fresh || !unit->def)
    return it->second;
  // `self.quant_mode = quant_mode`, the constructor's own parameter, assigned nowhere else.
  const FunctionDef *init = unit->find_method("__init__");
  if (!init)
    return it->second;
  const Stmt *only = nullptr;
  size_t assignments = 0;
  find_statement(init->body, [&](const Stmt *st) {
    if (st->kind == StmtKind::Assign)
      for (const Expr *target : st->targets)
        if (is_self_attribute(target, name)) {
          only = st;
          ++assignments;
        }
    return false;
  });
  if (assignments != 1 || !only->value || only->value->kind != ExprKind::Name)
    return it->second;
  std::string_view parameter = only->value->text;
  std::optional<size_t> position;
  for (size_t i = 0; i < init->parameters.size(); ++i)
    if (init->parameters[i].name == parameter && !init->parameters[i].variadic)
      position = i == 0 ? std::nullopt : std::optional<size_t>(i - 1); // after `self`
  if (!position)
    return it->second;
  // Every construction of the class in the package hands it the same `config.Y`.
  std::string key;
  bool agreed = true;
  size_t constructions = 0;
  for (const auto &cls : pkg_.classes) {
    const FunctionDef *builder = cls->find_method("__init__");
    if (!builder || !agreed)
      continue;
    find_statement(builder->body, [&](const Stmt *st) {
      auto construction = [&](const Expr *e) {
        if (e->kind != ExprKind::Call || e->operands.empty() ||
            !is_name(e->operands[0], unit->name))
          return false;
        ++constructions;
        const Expr *handed = nullptr;
        if (const Keyword *k = e->keyword(parameter))
          handed = k->value;
        else if (*position + 1 < e->operands.size())
          handed = e->operands[*position + 1];
        std::string from = handed ? configuration_attribute(handed) : "";
        // `quant_mode=self.quant_mode`: what the builder's own attribute copies.
        if (from.empty() && handed && handed->kind == ExprKind::Attribute &&
            is_name(handed->operands[0], "self")) {
          RunCondition copied;
          find_configuration_source(*cls, std::string(handed->text), copied);
          from = !copied.config_key.empty()
                     ? copied.config_key
                     : constructor_argument_setting(cls.get(), std::string(handed->text));
        }
        if (from.empty() || (!key.empty() && from != key))
          agreed = false;
        else
          key = from;
        return false;
      };
      any_subexpression(st->value, construction, 32, false);
      return !agreed;
    });
  }
  if (agreed && constructions > 0)
    it->second = key;
  return it->second;
}

std::string member_build_test(const ModuleClass &unit, std::string_view member) {
  const FunctionDef *init = nullptr;
  if (unit.def)
    for (const FunctionDef *m : unit.def->methods)
      if (m->name == "__init__")
        init = m;
  auto test = [&](uint32_t where) -> std::string {
    if (!init || !unit.file)
      return "";
    if (auto guard = construction_guard(init->body, where))
      return spelled_guard(*unit.file, *guard);
    const Stmt *assignment = find_statement(init->body, [where](const Stmt *st) {
      return st->kind == StmtKind::Assign && st->range.begin <= where && where < st->range.end;
    });
    if (!assignment || !assignment->value || assignment->value->kind != ExprKind::Conditional)
      return "";
    // `A if test else None`: built where the test holds (`None if test else A`: where it fails).
    const Expr *conditional = assignment->value;
    return spelled_guard(*unit.file, {conditional->operands[1],
                                      conditional->operands[0]->kind != ExprKind::NoneLiteral});
  };
  for (const ChildDecl &child : unit.children)
    if (child.name == member)
      return test(child.range.begin);
  for (const ParameterDecl &param : unit.parameters)
    if (param.name == member)
      return test(param.range.begin);
  for (const ModuleClass *base : unit.bases)
    if (std::string t = member_build_test(*base, member); !t.empty())
      return t;
  return "";
}

bool member_built_conditionally(const ModuleClass &unit, std::string_view member) {
  return !member_build_test(unit, member).empty();
}

std::optional<RunCondition> member_built_by_setting(const ModuleClass &unit,
                                                    std::string_view member, std::string *written) {
  if (!unit.def || !unit.file || member.empty() || member.find('.') != std::string_view::npos)
    return std::nullopt;
  std::string name(member);
  if (rebound_after_init(unit, {name}))
    return std::nullopt;
  RunCondition test;
  test.text = "self." + name + " is not None";
  // Built on one path only: a member `__init__` builds on both branches (`nn.Identity()` or a
  // layer) always exists.
  const ChildDecl *child = nullptr;
  size_t declarations = 0;
  for (const ChildDecl *c : unit.all_children())
    if (c->name == name) {
      child = c;
      ++declarations;
    }
  for (const ParameterDecl *p : unit.all_parameters())
    declarations += p->name == name;
  if (declarations != 1)
    return std::nullopt;
  if (!child) {
    // A parameter: `self.<p>` holds None where it was not built, which the model's own values
    // tell (ModuleNode::plain_values).
    test.attribute = {name};
    test.comparison = "is not";
    test.literal = "null";
    find_configuration_source(unit, name, test);
    if (test.config_key.empty() || !test.config_truth)
      return std::nullopt;
    if (written)
      *written = (*test.config_truth ? "config." : "not config.") + test.config_key;
    return test;
  }
  // A child: `if config.Y:` (or `not config.Y`, `config.Y > 0`, a count) builds it; a model
  // built without it holds no such child (placement ranking reads that as None).
  const FunctionDef *init = nullptr;
  for (const FunctionDef *m : unit.def->methods)
    if (m->name == "__init__")
      init = m;
  auto guard = init ? construction_guard(init->body, child->range.begin) : std::nullopt;
  if (!guard || !guard->first)
    return std::nullopt;
  // `else: self.out = nn.Identity()`: something else stands there otherwise (None does not).
  size_t bound = 0;
  find_statement(init->body, [&](const Stmt *st) {
    if (st->kind == StmtKind::Assign && st->value && st->value->kind != ExprKind::NoneLiteral)
      for (const Expr *target : st->targets)
        bound += is_self_attribute(target, name);
    return false;
  });
  if (bound > 1)
    return std::nullopt;
  const Expr *condition = guard->first;
  bool built_when = guard->second;
  if (condition->kind == ExprKind::BoolOp && condition->text == "not" &&
      condition->operands.size() == 1) {
    condition = condition->operands[0];
    built_when = !built_when;
  }
  std::string key = configuration_attribute(condition);
  if (std::string op = comparison_operator(condition); key.empty() && !op.empty()) {
    // A count compared with zero is its truth: `> 0`, `!= 0`, `>= 1` hold where it is non-zero.
    std::string literal = literal_json(*unit.file, condition->operands[1]);
    bool nonzero = ((op == ">" || op == "!=") && literal == "0") || (op == ">=" && literal == "1");
    bool zero = (op == "==" && literal == "0") || (op == "<" && literal == "1") ||
                (op == "<=" && literal == "0");
    if (!nonzero && !zero)
      return std::nullopt;
    key = configuration_attribute(condition->operands[0]);
    built_when = nonzero ? built_when : !built_when;
  }
  if (key.empty())
    return std::nullopt;
  test.attribute = {name};
  test.comparison = "is not";
  test.literal = "null";
  test.config_key = key;
  test.config_truth = built_when;
  if (written)
    *written = spelled_guard(*unit.file, *guard);
  return test;
}

namespace {

// The argument `condition` (taken the way `taken` says) needs to be passed: `x is not None`,
// `x` taken; `x is None`, `not x` not taken. Empty for anything else.
std::string_view argument_needed(const Expr *condition, bool taken) {
  if (!condition)
    return {};
  if (condition->kind == ExprKind::BoolOp && condition->text == "not" &&
      condition->operands.size() == 1)
    return argument_needed(condition->operands[0], !taken);
  if (condition->kind == ExprKind::Name)
    return taken ? condition->text : std::string_view();
  if (condition->kind == ExprKind::Compare && condition->operands.size() == 2 &&
      condition->operands[1]->kind == ExprKind::NoneLiteral &&
      condition->operands[0]->kind == ExprKind::Name &&
      ((condition->text == "is not" && taken) || (condition->text == "is" && !taken)))
    return condition->operands[0]->text;
  return {};
}

const Parameter *none_default_parameter(const FunctionDef &fn, std::string_view name) {
  for (const Parameter &p : fn.parameters)
    if (p.name == name && !p.variadic && p.default_value &&
        p.default_value->kind == ExprKind::NoneLiteral)
      return &p;
  return nullptr;
}

// `name = name if name is not None else self.config.K` (or `self.config.K if name is None else
// name`): transformers' idiom for an argument that defaults to a setting. K, else empty.
std::string_view configuration_fallback(const Stmt *s, std::string_view name) {
  if (s->kind != StmtKind::Assign || s->targets.size() != 1 || !s->value ||
      s->targets[0]->kind != ExprKind::Name || s->targets[0]->text != name ||
      s->value->kind != ExprKind::Conditional || s->value->operands.size() != 3)
    return {};
  const Expr *kept = s->value->operands[0], *test = s->value->operands[1],
             *otherwise = s->value->operands[2];
  if (test->kind != ExprKind::Compare || test->operands.size() != 2 ||
      test->operands[1]->kind != ExprKind::NoneLiteral || !is_name(test->operands[0], name))
    return {};
  if (test->text == "is")
    std::swap(kept, otherwise);
  else if (test->text != "is not")
    return {};
  const std::vector<std::string> setting = self_attribute_path(otherwise);
  if (!is_name(kept, name) || setting.size() != 2 || setting[0] != "config")
    return {};
  return otherwise->text;
}

// The arguments of `forward` one of which must be passed for `name` to hold a value at `before`:
// `name` itself, and those guarding each earlier statement that rebinds it (`if pixel_values is
// not None: image_embeddings = self.embed_patches(pixel_values)`). Empty when a rebinding runs
// under anything else. A rebinding to a setting when the argument is not passed is named in
// `fallback` (one, for `name` itself).
std::vector<std::string> arguments_making(const FunctionDef &forward, std::string_view name,
                                          uint32_t before, int depth = 0,
                                          std::string *fallback = nullptr) {
  if (depth > 4 || !none_default_parameter(forward, name))
    return {};
  std::vector<std::string> out{std::string(name)};
  bool unknown = false;
  find_statement(forward.body, [&](const Stmt *s) {
    if (s->range.begin >= before || unknown || !binds_name(s, name))
      return false;
    std::string_view setting = fallback ? configuration_fallback(s, name) : std::string_view();
    if (!setting.empty() && fallback->empty()) {
      *fallback = std::string(setting);
      return false;
    }
    auto guard = construction_guard(forward.body, s->range.begin);
    std::string_view other = guard ? argument_needed(guard->first, guard->second) : "";
    std::vector<std::string> more =
        other.empty() || other == name
            ? std::vector<std::string>{}
            : arguments_making(forward, other, s->range.begin, depth + 1);
    if (more.empty())
      unknown = true;
    out.insert(out.end(), more.begin(), more.end());
    return false;
  });
  if (unknown)
    return {};
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace

// Tests of the unit's `forward` arguments around the site: the line runs only in instances whose
// caller passes one of them (UDOP's decoder stack never receives the image its encoder does).
void Interpreter::note_argument_conditions(Site &site) const {
  const ModuleClass *unit = frame_->unit;
  if (!unit || !unit->file)
    return;
  const FunctionDef *forward = unit->find_method("forward");
  if (!forward)
    return;
  for (const Frame *f = frame_; f && f->unit == unit; f = f->parent) {
    if (f->function != forward || !f->file)
      continue;
    for (const auto &[condition, taken] : f->assumed) {
      std::vector<std::pair<const Expr *, bool>> tests{{condition, taken}};
      // `a is not None and b is not None`, taken: each holds.
      if (condition && condition->kind == ExprKind::BoolOp && condition->text == "and" && taken) {
        tests.clear();
        for (const Expr *operand : condition->operands)
          tests.emplace_back(operand, true);
      }
      for (const auto &[test, way] : tests) {
        std::string_view name = argument_needed(test, way);
        if (name.empty())
          continue;
        std::string fallback;
        std::vector<std::string> arguments =
            arguments_making(*forward, name, test->range.begin, 0, &fallback);
        if (arguments.empty())
          continue;
        RunCondition condition_run;
        condition_run.text = std::string(f->file->source->slice(test->range));
        condition_run.holds = way;
        condition_run.arguments = std::move(arguments);
        condition_run.argument_fallback = std::move(fallback);
        const Expr *asked = test; // (`not (x is None)`: the comparison under the `not`)
        while (asked->kind == ExprKind::BoolOp && asked->text == "not" &&
               asked->operands.size() == 1)
          asked = asked->operands[0];
        condition_run.fallback_tests_none = asked->kind == ExprKind::Compare;
        site.run_conditions.push_back(std::move(condition_run));
      }
    }
  }
  note_embeddings_instead(site);
}

// `if input_ids is None:` (or `if inputs_embeds is not None:`) in a method of the unit (forward
// or a helper such as get_placeholder_mask) taking both: the branch runs only for a caller that
// hands embeddings instead of token ids.
void Interpreter::note_embeddings_instead(Site &site) const {
  const ModuleClass *unit = frame_->unit;
  for (const Frame *f = frame_; f && f->unit == unit; f = f->parent) {
    if (!f->function || !f->file || f->function->parameters.size() < 3 ||
        f->function->parameters[0].name != "self")
      continue;
    // transformers' calling convention: token ids first, `inputs_embeds` in their place.
    std::string_view primary = f->function->parameters[1].name, embeddings = "inputs_embeds";
    if (primary != "input_ids" ||
        std::none_of(f->function->parameters.begin(), f->function->parameters.end(),
                     [&](const Parameter &p) { return p.name == embeddings; }))
      continue;
    for (const auto &[condition, taken] : f->assumed) {
      std::string op = comparison_operator(condition);
      if (!condition || (op != "is" && op != "is not") ||
          condition->operands[1]->kind != ExprKind::NoneLiteral)
        continue;
      // No ids (`input_ids is None` holds), or embeddings given (`inputs_embeds is not None`).
      bool ids_absent = is_name(condition->operands[0], primary) && (op == "is") == taken;
      bool embeddings_given =
          is_name(condition->operands[0], embeddings) && (op == "is not") == taken;
      if (!ids_absent && !embeddings_given)
        continue;
      RunCondition run;
      run.text = std::string(f->file->source->slice(condition->range));
      run.holds = taken;
      run.embeddings_instead = std::string(embeddings);
      site.run_conditions.push_back(std::move(run));
    }
  }
}

const OriginSet *Interpreter::emit(Site &site) {
  if (cpu_probe_ && muted_sites_ > 0 && combines_operands(site.kind) && probe_meets_model(site))
    note_probe_hit(site.expr);
  // Python script code is checked for literal placements only; where code is placed
  // explicitly (LibTorch), script code combining placed tensors is checked like any code.
  if (muted_sites_ > 0 || (frame_->script && site.kind != SiteKind::ModelCall &&
                           !(frame_->file && frame_->file->explicit_placement)))
    return nullptr;
  site.unit = frame_->unit;
  site.function = call_stack_.empty() ? nullptr : call_stack_.back();
  site.file = frame_->file;
  site.script = frame_->script;
  site.statement = frame_->statement;
  site.members_read = &frame_->members_read;
  site.tensor_subscripts = &tensor_subscripts_;
  site.unit_whole = branch_excludes_weighted_children();
  site.run_conditions = run_conditions();
  note_argument_conditions(site);
  site.pipeline = frame_->pipeline != nullptr;
  site.first_pass = first_passes_ > 0;
  // `apply_rotary_pos_emb(q, k, cos, sin)`: the call where the operands entered the outermost
  // helper also tells where to look.
  for (const Frame *f = frame_; f->call && f->caller; f = f->caller) {
    site.entry_call = {f->call, f->caller->file, f->caller->function, f->caller->unit};
  }
  int anchor = sink_.on_site(site);
  if (anchor < 0)
    return nullptr;
  anchored_.push_back(site.operands[static_cast<size_t>(anchor)].origins);
  return &anchored_.back();
}

void Interpreter::hardcoded(const Expr *e, std::string device) {
  if (frame_->script || !frame_->unit || muted_sites_ > 0)
    return;
  // A wrapper of `.cuda()` forwards its caller's choice; a tensor made only to try a kernel on
  // the device meets none of the model's tensors.
  const FunctionDef *running = call_stack_.empty() ? nullptr : call_stack_.back();
  if (running && (is_cuda_wrapper(*running) ||
                  (frame_->statement && is_capability_probe(*running, *frame_->statement))))
    return;
  // A LibTorch module that places its own children on literal devices (a model split by hand)
  // is meant to run there: its literal devices are the design, not an oversight.
  if (frame_->file && frame_->file->explicit_placement) {
    std::vector<const ChildDecl *> children = frame_->unit->all_children();
    if (std::any_of(children.begin(), children.end(),
                    [](const ChildDecl *c) { return !c->placed_device.empty(); }))
      return;
  }
  Site site;
  site.kind = SiteKind::HardcodedDevice;
  site.expr = e;
  site.operation = std::move(device);
  site.unit = frame_->unit;
  site.function = call_stack_.empty() ? nullptr : call_stack_.back();
  site.file = frame_->file;
  site.statement = frame_->statement;
  // In a helper inlined from the module's method: the call in that method tells who runs it.
  for (const Frame *f = frame_; f->call && f->caller; f = f->caller)
    site.entry_call = {f->call, f->caller->file, f->caller->function, f->caller->unit};
  sink_.on_site(site);
}

Value Interpreter::loss_site(const Expr *call, const Args &args, std::string name) {
  Site site;
  site.kind = SiteKind::Loss;
  site.expr = call;
  site.operation = std::move(name);
  size_t taken = 0;
  for (size_t i = 0; i < args.positional.size() && taken < 2; ++i) {
    const Value &v = args.positional[i];
    if (v.kind == Value::Kind::Tensor) {
      SiteOperand op{call->operands[i + 1], v.origins};
      if (taken == 1)
        op.role = OperandRole::Target;
      site.operands.push_back(op);
      ++taken;
    }
  }
  for (const Keyword &k : call->keywords) {
    if (taken >= 2)
      break;
    for (const auto &[name_, v] : args.keywords)
      if (name_ == k.name && v.kind == Value::Kind::Tensor &&
          (k.name == "input" || k.name == "target" || k.name == "labels" || k.name == "logits")) {
        SiteOperand op{k.value, v.origins};
        if (k.name == "target" || k.name == "labels")
          op.role = OperandRole::Target;
        site.operands.push_back(op);
        ++taken;
      }
  }
  if (site.operands.size() == 2) {
    // A loss takes tensors: an unannotated `labels` argument is one.
    for (const Value &v : args.positional)
      note_tensor(v);
    for (const auto &kv : args.keywords)
      note_tensor(kv.second);
    emit(site);
  }
  return first_tensor(args);
}

Value Interpreter::operation_site(SiteKind kind, const Expr *call, const Args &args,
                                  std::string name, const Value *receiver) {
  Site site;
  site.kind = kind;
  site.expr = call;
  site.operation = std::move(name);
  if (receiver && receiver->kind == Value::Kind::Tensor)
    site.operands.push_back({call->operands[0]->operands[0], receiver->origins, OperandRole::Anchor,
                             MoveLimit::None, receiver->paths});
  // Unlike `a[idx]`, these functions want their index and mask on the tensor's own device.
  OriginSet listed; // tensors passed in a list: `torch.einsum(eq, [a, b])`, `index_put_({i}, v)`
  for (size_t i = 0; i < args.positional.size(); ++i) {
    const Value &v = args.positional[i];
    const Expr *arg = i + 1 < call->operands.size() ? call->operands[i + 1] : nullptr;
    if (v.kind == Value::Kind::Tuple && v.elements && arg && arg->kind == ExprKind::Tuple) {
      for (size_t j = 0; j < v.elements->size() && j < arg->operands.size(); ++j) {
        const Value &element = (*v.elements)[j];
        if (element.kind == Value::Kind::Tensor && element.has_origins()) {
          site.operands.push_back({arg->operands[j], element.origins});
          add_origins(listed, element.origins);
        }
      }
      continue;
    }
    if (v.kind != Value::Kind::Tensor || !v.has_origins())
      continue;
    site.operands.push_back(
        {call->operands[i + 1], v.origins, OperandRole::Value, MoveLimit::None, v.paths});
  }
  for (size_t k = 0; k < call->keywords.size(); ++k) {
    const auto &[name_, v] = args.keywords[k];
    if (v.kind == Value::Kind::Tensor && v.has_origins() &&
        (torch_catalog::is_tensor_operand_keyword(name_) || name_ == "attn_mask" ||
         name_ == "index" || name_ == "mask" || name_ == "src" || name_ == "weight" ||
         name_ == "bias"))
      site.operands.push_back({call->keywords[k].value, v.origins});
  }
  // `torch.where(labels == -1, weight, embedding)` gives the values, not the condition: a value
  // anchors the move (and the result), the condition built from inputs is what moves.
  const bool where_values = !receiver && ends_with(site.operation, ".where") &&
                            call->operands.size() > 1 && !args.positional.empty();
  if (where_values && site.operands.size() > 1 && site.operands.front().expr == call->operands[1])
    std::rotate(site.operands.begin(), site.operands.begin() + 1, site.operands.end());
  const OriginSet *reported = site.operands.size() > 1 ? emit(site) : nullptr;
  if (receiver && receiver->kind == Value::Kind::Tensor)
    return *receiver;
  Value out;
  if (where_values) {
    // The result's device is every operand's (they must agree, a 0-dim CPU one aside), but its
    // values are the 2nd and 3rd operands': name it by them, a tensor the model made before a
    // CPU filler (`torch.tensor(-100).type_as(labels)`), and by the condition last.
    Args values;
    values.positional.assign(args.positional.begin() + 1, args.positional.end());
    for (const auto &[keyword, value] : args.keywords)
      if (torch_catalog::is_tensor_operand_keyword(keyword))
        values.positional.push_back(value);
    values.positional.push_back(args.positional.front());
    auto made_by_model = [](const Value &v) {
      return std::any_of(v.origins.begin(), v.origins.end(), [](const Origin *o) {
        return !made_on_cpu(o) && o->kind != OriginKind::LiteralDevice &&
               o->kind != OriginKind::RunTimeDevice;
      });
    };
    std::stable_partition(values.positional.begin(), values.positional.end() - 1, made_by_model);
    out.origins = tensor_union(values);
  } else {
    out.origins = tensor_union(args);
  }
  add_origins(out.origins, listed);
  out.kind = out.origins.empty() ? Value::Kind::Neutral : Value::Kind::Tensor;
  return anchored_result(reported, out);
}

void Interpreter::placed_child_call(const Expr *call, const ChildDecl &child, const Args &args) {
  const Expr *child_expr = call->operands[0];
  Site site;
  site.kind = SiteKind::ModelCall;
  site.expr = call;
  site.operation = call_spelling(call, child_expr);
  SiteOperand anchor{
      child_expr,
      {make_origin(OriginKind::LiteralDevice, intern(child.placed_device), child_expr->range)}};
  anchor.role = OperandRole::Anchor;
  site.operands.push_back(anchor);
  for (size_t i = 0; i < args.positional.size() && i + 1 < call->operands.size(); ++i)
    if (args.positional[i].has_origins())
      site.operands.push_back({call->operands[i + 1], origins_of(args.positional[i])});
  if (site.operands.size() > 1)
    emit(site);
}

std::string Interpreter::call_spelling(const Expr *call, const Expr *callee) const {
  std::string_view callee_text = frame_->file->source->slice(callee->range);
  if (!frame_->file->explicit_placement)
    return std::string(callee_text) + "(...)";
  // The call's own text up to its argument list: `model->forward`, `module.forward`, `fc2`.
  std::string_view text = frame_->file->source->slice(call->range);
  int depth = 0;
  for (size_t i = text.size(); i-- > 0;) {
    if (text[i] == ')')
      ++depth;
    else if (text[i] == '(' && --depth == 0)
      return i > 0 ? std::string(text.substr(0, i)) + "(...)" : std::string(callee_text) + "(...)";
  }
  return std::string(callee_text) + "(...)";
}

Value Interpreter::script_model_call(const Expr *call, const Expr *model_expr, const Value &model,
                                     const Args &args) {
  Site site;
  site.kind = SiteKind::ModelCall;
  site.expr = call;
  site.operation = call_spelling(call, model_expr);
  SiteOperand anchor{model_expr, model.origins};
  anchor.role = OperandRole::Anchor;
  site.operands.push_back(anchor);
  // Where code is placed explicitly (LibTorch), a tensor made on the CPU is placed too.
  bool explicit_placement = frame_->file && frame_->file->explicit_placement;
  // In a Python script, a tensor made on the CPU and never moved, handed to a model the code
  // moved (`model(x)`, `model.forward(x)`, `model.generate(x)`; not `load_state_dict`), unless
  // the file makes constructors place their tensors elsewhere.
  const Expr *callee = call->operands[0];
  bool runs_model =
      std::any_of(model.origins.begin(), model.origins.end(),
                  [](const Origin *o) { return o->has(OriginFact::PlacedObject); }) &&
      (callee == model_expr ||
       (callee->kind == ExprKind::Attribute &&
        (callee->text == "forward" || callee->text == "generate" || callee->text == "__call__")));
  bool cpu_inputs_count = explicit_placement || (runs_model && !sets_default_device(frame_->file));
  auto placed = [&](const Value &v) {
    OriginSet all = origins_of(v);
    if (has_literal(v))
      return true;
    if (explicit_placement)
      return std::any_of(all.begin(), all.end(),
                         [](const Origin *o) { return o->kind == OriginKind::Fresh; });
    return cpu_inputs_count && !all.empty() && std::all_of(all.begin(), all.end(), made_on_cpu);
  };
  for (size_t i = 0; i < args.positional.size(); ++i)
    if (placed(args.positional[i]))
      site.operands.push_back({call->operands[i + 1], origins_of(args.positional[i])});
  for (size_t k = 0; k < args.keywords.size() && k < call->keywords.size(); ++k)
    if (placed(args.keywords[k].second))
      site.operands.push_back({call->keywords[k].value, args.keywords[k].second.origins});
  if (site.operands.size() > 1)
    emit(site);
  // The outputs of a model placed on one device sit there.
  if (explicit_placement)
    return model;
  return first_tensor(args);
}

} // namespace devlint
