// Every rule, in precedence order: the first enabled rule that claims a site reports it. The
// rules on what made an operand (DL008 literal placements, DL005 fresh tensors, DL004 module
// state) come before the rules on the operation (loss, indexing, concat, arithmetic).
#include "rules/rule.h"

#include <string>

#include "model/did_you_mean.h"

namespace devlint {

const Rule &script_device_mismatch_rule();
const Rule &fresh_tensor_device_rule();
const Rule &split_module_parameter_rule();
const Rule &loss_label_device_rule();
const Rule &cross_device_indexing_rule();
const Rule &cross_device_concat_rule();
const Rule &cross_device_arithmetic_rule();
const Rule &hardcoded_device_rule();
const Rule &unused_suppression_rule(); // reported by findings/suppressions.cpp

const std::vector<const Rule *> &all_rules() {
  static const std::vector<const Rule *> rules = {
      &script_device_mismatch_rule(),  &fresh_tensor_device_rule(),
      &split_module_parameter_rule(),  &loss_label_device_rule(),
      &cross_device_indexing_rule(),   &cross_device_concat_rule(),
      &cross_device_arithmetic_rule(), &hardcoded_device_rule(),
      &unused_suppression_rule(),
  };
  return rules;
}

bool SiteRule::listens_to(SiteKind kind) const {
  for (SiteKind k : site_kinds())
    if (k == kind)
      return true;
  return false;
}

const Rule *find_rule(std::string_view code) {
  for (const Rule *r : all_rules())
    if (r->info().code == code || r->info().name == code)
      return r;
  return nullptr;
}

std::string resolve_selector(std::string_view selector) {
  if (selector == "ALL")
    return std::string(selector);
  if (const Rule *rule = find_rule(selector))
    return std::string(rule->info().code);
  for (const Rule *rule : all_rules())
    if (!selector.empty() && rule->info().code.substr(0, selector.size()) == selector)
      return std::string(selector);
  return {};
}

std::string selector_suggestion(std::string_view selector) {
  std::vector<std::string> known;
  for (const Rule *rule : all_rules()) {
    known.emplace_back(rule->info().code);
    known.emplace_back(rule->info().name);
  }
  return did_you_mean(selector, known);
}

std::string rule_markdown(const RuleInfo &info) {
  return "# " + std::string(info.name) + " (" + std::string(info.code) + ")\n\n" +
         std::string(info.summary) + "\n\n" + std::string(info.doc);
}

} // namespace devlint
