// Every rule, in precedence order: the first rule that claims a site reports it.
#include "rules/rule.h"

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

const Rule *find_rule(std::string_view code) {
  for (const Rule *r : all_rules())
    if (r->info().code == code || r->info().name == code)
      return r;
  return nullptr;
}

} // namespace devlint
