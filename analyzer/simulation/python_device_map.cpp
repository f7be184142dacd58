// Device maps written in Python (a dict literal, or a function of the number of GPUs), and map
// values as accelerate accepts them.
#include "simulation/evaluator.h"

namespace devlint {

using simulation::Evaluator;
using simulation::from_json;
using simulation::Kind;
using simulation::to_json;
using simulation::Value;

std::string normalize_device(const nlohmann::json &value) {
  if (value.is_number_integer() && value.get<int64_t>() >= 0)
    return std::to_string(value.get<int64_t>());
  if (!value.is_string())
    return "";
  std::string s = value.get<std::string>();
  if (s == "cpu" || s == "disk" || s == "meta" || s == "mps")
    return s;
  if (s == "cuda")
    return "0";
  for (const char *prefix : {"cuda:", "xpu:", "npu:"})
    if (s.rfind(prefix, 0) == 0 && s.size() > std::strlen(prefix) &&
        s.find_first_not_of("0123456789", std::strlen(prefix)) == std::string::npos)
      return s.substr(std::strlen(prefix));
  if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos)
    return s;
  return "";
}

EvaluatedDeviceMap evaluate_python_device_map(const Package &package, const SyntaxFile &file,
                                              const ModelConfig &config, int gpus,
                                              const std::string &function_name) {
  EvaluatedDeviceMap out;
  Evaluator evaluator(package, {&file}, nullptr, &out.unknowns);
  evaluator.set_global(&file, "config", from_json(config.values, true));
  auto mentions_map = [](std::string_view name) {
    return name.find("device_map") != std::string_view::npos;
  };
  const FunctionDef *fn = nullptr;
  for (const FunctionDef *f : file.functions)
    if (function_name.empty() ? mentions_map(f->name) && !fn : f->name == function_name)
      fn = f;
  Value result;
  if (fn) {
    std::vector<std::pair<std::string, Value>> kwargs;
    std::string call = std::string(fn->name) + "(";
    for (const Parameter &p : fn->parameters) {
      std::string name(p.name);
      if (p.variadic)
        continue;
      std::string lower = name;
      for (char &c : lower)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower.find("gpu") != std::string::npos || lower.find("device") != std::string::npos) {
        kwargs.emplace_back(name, Value::integer_value(gpus));
        call += (call.back() == '(' ? "" : ", ") + name + "=" + std::to_string(gpus);
      } else if (name == "config") {
        kwargs.emplace_back(name, from_json(config.values, true));
      } else if (!p.default_value) {
        out.unknowns.push_back("argument `" + name + "` of " + std::string(fn->name) +
                               " has no value");
      }
    }
    out.origin = call + ")";
    Value f = evaluator.global_value(&file, std::string(fn->name));
    result = evaluator.call_with(f, std::move(kwargs));
  } else if (!function_name.empty()) {
    out.error = "no function `" + function_name + "` in " + file.source->display_path;
    return out;
  } else {
    std::string chosen;
    for (const Stmt *st : file.body)
      if (st->kind == StmtKind::Assign && st->value && st->value->kind == ExprKind::Dict &&
          st->targets.size() == 1 && st->targets[0]->kind == ExprKind::Name &&
          (chosen.empty() || mentions_map(st->targets[0]->text)))
        chosen = std::string(st->targets[0]->text);
    if (chosen.empty()) {
      out.error = "no dict and no function with `device_map` in its name in " +
                  file.source->display_path + " (name one with FILE.py:FUNCTION)";
      return out;
    }
    out.origin = chosen;
    result = evaluator.global_value(&file, chosen);
  }
  if (!result.is(Kind::Dict)) {
    out.error = out.origin + " did not evaluate to a dict" +
                (result.is(Kind::Unknown) && !result.text.empty() ? " (" + result.text + ")" : "");
    return out;
  }
  for (const auto &[k, v] : *result.dict) {
    if (!k.is(Kind::Str)) {
      out.unknowns.push_back("a key that is not a string");
      continue;
    }
    bool complete = true;
    std::string device = normalize_device(to_json(v, &complete));
    if (device.empty()) {
      out.unknowns.push_back("the device of `" + k.text + "`");
      continue;
    }
    out.entries.emplace_back(k.text, device);
  }
  return out;
}

} // namespace devlint
