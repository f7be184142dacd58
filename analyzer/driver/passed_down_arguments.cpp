#include "driver/passed_down_arguments.h"

#include <algorithm>
#include <vector>

namespace devlint {

namespace {

constexpr int kMaxChain = 16;

struct PathStep {
  const ModuleNode *node = nullptr;
  std::string path;
};

// The modules from the root to `path`, each with its path.
std::vector<PathStep> steps_to(const ModuleNode *root, const std::string &path) {
  std::vector<PathStep> steps{{root, ""}};
  size_t pos = 0;
  while (!path.empty() && pos <= path.size()) {
    size_t dot = path.find('.', pos);
    std::string name = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    const ModuleNode *next = steps.back().node ? steps.back().node->child(name) : nullptr;
    if (!next)
      return {};
    steps.push_back({next, path.substr(0, dot == std::string::npos ? path.size() : dot)});
    if (dot == std::string::npos)
      break;
    pos = dot + 1;
  }
  return steps;
}

bool mentions_self_attribute(const Expr *e, std::string_view attribute) {
  return any_subexpression(
      e, [&](const Expr *x) { return is_self_attribute(x, attribute); }, 8, false);
}

// Calls in `body` of the child `attribute` (`self.attribute(...)`), or of the elements of the
// container `attribute` (`for layer in self.layers: layer(...)`, `self.layers[i](...)`).
// `other_use`: the child is also used some other way (handed on, stored), so calls do not tell
// everything it receives.
void find_calls(const std::vector<Stmt *> &body, std::string_view attribute, bool container,
                std::vector<std::string_view> &loop_names, std::vector<const Expr *> &calls,
                bool &other_use);

void find_calls_in(const Expr *e, std::string_view attribute, bool container,
                   const std::vector<std::string_view> &loop_names,
                   std::vector<const Expr *> &calls, bool &other_use, int depth = 0) {
  if (!e || depth > 64)
    return;
  if (e->kind == ExprKind::Call) {
    const Expr *callee = e->operands[0];
    if (callee->kind == ExprKind::Attribute && callee->text == "forward")
      callee = callee->operands[0];
    bool called = container ? (callee->kind == ExprKind::Subscript &&
                               is_self_attribute(callee->operands[0], attribute)) ||
                                  (callee->kind == ExprKind::Name &&
                                   std::find(loop_names.begin(), loop_names.end(), callee->text) !=
                                       loop_names.end())
                            : is_self_attribute(callee, attribute);
    if (called) {
      calls.push_back(e);
      for (size_t i = 1; i < e->operands.size(); ++i)
        find_calls_in(e->operands[i], attribute, container, loop_names, calls, other_use,
                      depth + 1);
      for (const Keyword &k : e->keywords)
        find_calls_in(k.value, attribute, container, loop_names, calls, other_use, depth + 1);
      return;
    }
  }
  if (!container && is_self_attribute(e, attribute)) {
    other_use = true;
    return;
  }
  for (const Expr *operand : e->operands)
    find_calls_in(operand, attribute, container, loop_names, calls, other_use, depth + 1);
  for (const Keyword &k : e->keywords)
    find_calls_in(k.value, attribute, container, loop_names, calls, other_use, depth + 1);
}

void find_calls(const std::vector<Stmt *> &body, std::string_view attribute, bool container,
                std::vector<std::string_view> &loop_names, std::vector<const Expr *> &calls,
                bool &other_use) {
  for (const Stmt *s : body) {
    if (!s)
      continue;
    // `for layer in self.layers`, `for i, layer in enumerate(self.layers)`: the element's name.
    if (container && s->kind == StmtKind::For && !s->targets.empty() &&
        mentions_self_attribute(s->value, attribute)) {
      const Expr *target = s->targets[0];
      if (target->kind == ExprKind::Name)
        loop_names.push_back(target->text);
      else if (target->kind == ExprKind::Tuple && !target->operands.empty() &&
               target->operands.back()->kind == ExprKind::Name)
        loop_names.push_back(target->operands.back()->text);
    }
    for (const Expr *e : s->targets)
      find_calls_in(e, attribute, container, loop_names, calls, other_use);
    for (const Expr *e : s->items)
      find_calls_in(e, attribute, container, loop_names, calls, other_use);
    find_calls_in(s->value, attribute, container, loop_names, calls, other_use);
    find_calls(s->body, attribute, container, loop_names, calls, other_use);
    find_calls(s->orelse, attribute, container, loop_names, calls, other_use);
    for (const auto &handler : s->handlers)
      find_calls(handler, attribute, container, loop_names, calls, other_use);
    find_calls(s->finalbody, attribute, container, loop_names, calls, other_use);
  }
}

// What `call` passes for the callee's forward parameter `index` (after `self`) named `name`.
const Expr *passed_expression(const Expr *call, size_t index, std::string_view name,
                              bool &unreadable) {
  for (size_t i = 1; i < call->operands.size(); ++i) {
    if (call->operands[i]->kind == ExprKind::Starred) {
      unreadable = true;
      return nullptr;
    }
    if (i - 1 == index)
      return call->operands[i];
  }
  for (const Keyword &k : call->keywords) {
    if (k.name.empty()) {
      unreadable = true; // **kwargs may pass it
      return nullptr;
    }
    if (k.name == name)
      return k.value;
  }
  return nullptr; // not passed: its default
}

} // namespace

std::optional<PassedDownArgument> passed_down_argument(const ModuleNode *root,
                                                       const std::string &module_path,
                                                       const std::string &parameter) {
  std::vector<PathStep> steps = steps_to(root, module_path);
  if (steps.empty())
    return std::nullopt;
  PassedDownArgument at{module_path, parameter};
  // Walk up: the module at steps[i] is called by its owner, steps[i - 1], or, for an element of
  // a container (ModuleList, ModuleDict, Sequential: no class of the package), by the
  // container's owner, steps[i - 2].
  for (size_t i = steps.size() - 1, chain = 0; i > 0 && chain < kMaxChain; ++chain) {
    const ModuleClass *callee = steps[i].node->cls;
    const FunctionDef *forward = callee ? callee->find_method("forward") : nullptr;
    if (!forward)
      return std::nullopt;
    size_t index = 0;
    bool found = false;
    for (size_t p = 1; p < forward->parameters.size(); ++p)
      if (forward->parameters[p].name == at.parameter && !forward->parameters[p].variadic) {
        index = p - 1;
        found = true;
      }
    if (!found)
      return std::nullopt;
    bool container = !steps[i - 1].node->cls && i >= 2;
    size_t owner = container ? i - 2 : i - 1;
    const ModuleClass *caller = steps[owner].node->cls;
    if (!caller)
      return std::nullopt;
    std::string attribute = steps[container ? i - 1 : i].path;
    attribute =
        attribute.substr(attribute.rfind('.') == std::string::npos ? 0 : attribute.rfind('.') + 1);
    std::vector<const Expr *> calls;
    bool other_use = false;
    const FunctionDef *caller_forward = caller->find_method("forward");
    for (const ModuleClass *c = caller; c; c = c->bases.empty() ? nullptr : c->bases.front())
      for (const FunctionDef *method : c->def->methods) {
        if (method->name == "__init__")
          continue; // where the child is built, not called
        std::vector<const Expr *> found_calls;
        std::vector<std::string_view> loop_names;
        find_calls(method->body, attribute, container, loop_names, found_calls, other_use);
        // Only calls from the caller's own forward hand on its arguments.
        if (!found_calls.empty() && method != caller_forward)
          return std::nullopt;
        calls.insert(calls.end(), found_calls.begin(), found_calls.end());
      }
    if (calls.empty() || other_use)
      return std::nullopt;
    std::string handed_on;
    for (const Expr *call : calls) {
      bool unreadable = false;
      const Expr *passed = passed_expression(call, index, at.parameter, unreadable);
      if (unreadable || !passed || passed->kind != ExprKind::Name ||
          !caller_forward->has_parameter(passed->text) || assigns_to(*caller_forward, passed->text))
        return at; // computed by the caller, or not read here: it arrives as argument here
      if (!handed_on.empty() && handed_on != passed->text)
        return at;
      handed_on = std::string(passed->text);
    }
    at = {steps[owner].path, handed_on};
    i = owner;
  }
  return at;
}

} // namespace devlint
