// diffusers pipelines (docs/DEVICE_MODEL.md section 2b): a pipeline is no module. Loaded with
// `device_map="balanced"`, it deals its components to GPUs whole and dispatches each with
// `force_hooks=True`: calling a component moves what it is handed to it and returns its output
// where the first tensor argument was, while a method reached without `forward` (a VAE's
// `encode`/`decode` through `apply_forward_hook`, which runs the root's hook with no arguments)
// computes on the component's device and returns there. `_execution_device` is the device of the
// first registered module component, `self.device` that of the first module among the
// constructor's argument names sorted. The pipeline's own methods combine what they are given
// where it is.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "model/text.h"
#include "placement/interpreter.h"

namespace devlint {
namespace {

// `self.register_modules(vae=vae, ...)` in the constructor of `cls` or of a package base.
const Expr *register_modules_call(const ModuleClass &cls) {
  const FunctionDef *init = cls.find_method("__init__");
  if (!init)
    return nullptr;
  for (const Stmt *s : init->body)
    if (s->kind == StmtKind::Expr && s->value && s->value->kind == ExprKind::Call &&
        s->value->text == "register_modules" &&
        s->value->operands[0]->kind == ExprKind::Attribute &&
        is_name(s->value->operands[0]->operands[0], "self"))
      return s->value;
  return nullptr;
}

// Components that hold no weights: tokenizers, schedulers, image processors, feature extractors
// and guiders of transformers and diffusers, as the constructor annotates them.
bool weightless_family(std::string_view annotation) {
  for (std::string_view family : {"Tokenizer", "Scheduler", "Processor", "FeatureExtractor",
                                  "Processing", "Guidance", "Guider"})
    if (annotation.find(family) != std::string_view::npos)
      return true;
  return false;
}

// The names a pipeline class (or a package base) lists in `_optional_components`.
std::vector<std::string_view> optional_components(const ModuleClass &cls) {
  std::vector<std::string_view> names;
  for (const ModuleClass *c = &cls; c; c = c->bases.empty() ? nullptr : c->bases.front()) {
    for (const Stmt *s : c->def->body)
      if (s->kind == StmtKind::Assign && !s->targets.empty() &&
          is_name(s->targets[0], "_optional_components") && s->value &&
          s->value->kind == ExprKind::Tuple) {
        for (const Expr *item : s->value->operands)
          if (item->kind == ExprKind::String)
            names.push_back(item->text);
        return names;
      }
  }
  return names;
}

// DiffusionPipeline.device (pipelines/pipeline_utils.py): the device of the first torch module
// among `_get_signature_keys`, which returns the constructor's arguments without a default and
// the optional components, sorted by name (the first not on the CPU, and under a balanced map all
// sit on GPUs). Not the registration order `_execution_device` follows (accelerate's hook on the
// first registered module component names its execution device).
std::string_view device_component(const FunctionDef &init,
                                  const std::vector<std::string_view> &modules,
                                  const std::vector<std::string_view> &optional) {
  std::string_view first;
  bool annotated = false;
  for (std::string_view name : modules) {
    const Parameter *parameter = nullptr;
    for (const Parameter &p : init.parameters)
      if (p.name == name && !p.variadic)
        parameter = &p;
    if (!parameter)
      continue;
    // An optional component that defaults to None is absent unless the checkpoint or the caller
    // supplies it (an image encoder most checkpoints leave null): not a module then.
    bool signature_key = !parameter->default_value ||
                         (parameter->default_value->kind != ExprKind::NoneLiteral &&
                          std::find(optional.begin(), optional.end(), name) != optional.end());
    if (signature_key && (first.empty() || name < first)) {
      first = name;
      annotated = !parameter->annotation.empty();
    }
  }
  return annotated ? first : std::string_view{}; // one not annotated may be no module
}

} // namespace

const Interpreter::PipelineComponents *Interpreter::pipeline_components(const ModuleClass &cls) {
  auto known = pipeline_components_.find(&cls);
  if (known != pipeline_components_.end())
    return known->second.registered ? &known->second : nullptr;
  PipelineComponents &components = pipeline_components_[&cls];
  const Expr *call = cls.is_module ? nullptr : register_modules_call(cls);
  if (!call)
    return nullptr;
  components.registered = true;
  const FunctionDef *init = cls.find_method("__init__");
  for (const Keyword &k : call->keywords) {
    if (k.name.empty())
      continue;
    std::string_view annotation;
    if (k.value && k.value->kind == ExprKind::Name)
      for (const Parameter &p : init->parameters)
        if (p.name == k.value->text)
          annotation = p.annotation;
    if (annotation.find("Scheduler") != std::string_view::npos)
      components.schedulers.push_back(k.name);
    if (weightless_family(annotation))
      continue;
    // A class of the package: a module, or an object holding no weights (a guider).
    const ModuleClass *named = nullptr;
    bool plain_object = false;
    for (std::string_view name : annotation_names(annotation))
      if (const ModuleClass *c = pkg_.find_class(name.substr(name.rfind('.') + 1), cls.file)) {
        if (c->is_module)
          named = c;
        else
          plain_object = true;
      }
    if (plain_object && !named)
      continue;
    components.modules.push_back(k.name);
    if (named)
      components.classes[k.name] = named;
    // The execution device is the first module's; one not annotated may be no module.
    if (components.modules.size() == 1)
      components.execution = annotation.empty() ? std::string_view{} : k.name;
  }
  components.device = device_component(*init, components.modules, optional_components(cls));
  return &components;
}

const Interpreter::PipelineComponents *Interpreter::running_pipeline() const {
  if (!frame_->pipeline)
    return nullptr;
  auto known = pipeline_components_.find(frame_->pipeline);
  return known == pipeline_components_.end() ? nullptr : &known->second;
}

bool Interpreter::is_component(std::string_view attr) const {
  const PipelineComponents *components = running_pipeline();
  return components && std::find(components->modules.begin(), components->modules.end(), attr) !=
                           components->modules.end();
}

std::string_view Interpreter::moved_component_key(std::string_view component) {
  // Not a Python name: no code can bind it.
  return intern("self." + std::string(component.substr(0, component.find('.'))) + " moved to");
}

Value Interpreter::component_tensor(std::string_view label, SourceRange range) {
  auto moved = frame_->env.find(moved_component_key(label));
  if (moved != frame_->env.end())
    return as_tensor(moved->second);
  const Origin *o = make_origin(OriginKind::Child, label, range);
  const_cast<Origin *>(o)->set(OriginFact::Component);
  return tensor(o);
}

// `self._execution_device`, `self.device`, `self.vae.device`.
std::optional<Value> Interpreter::pipeline_attribute(const Expr *e) {
  if (!frame_->pipeline)
    return std::nullopt;
  const Expr *object = e->operands[0];
  if (is_name(object, "self")) {
    if (e->text != "_execution_device" && e->text != "device")
      return std::nullopt;
    const PipelineComponents *components = running_pipeline();
    std::string_view component = !components                      ? std::string_view{}
                                 : e->text == "_execution_device" ? components->execution
                                                                  : components->device;
    if (component.empty())
      return Value::neutral();
    return device_of(component_tensor(component, e->range));
  }
  if (object->kind == ExprKind::Attribute && is_name(object->operands[0], "self") &&
      is_component(object->text) && e->text == "device")
    return device_of(component_tensor(object->text, e->range));
  return std::nullopt;
}

// `self.unet(x, t)`, `self.vae.decode(z)`, and the pipeline's own methods.
std::optional<Value> Interpreter::pipeline_call(const Expr *call) {
  if (!frame_->pipeline)
    return std::nullopt;
  const Expr *callee = call->operands[0];
  if (callee->kind != ExprKind::Attribute)
    return std::nullopt;
  const Expr *receiver = callee->operands[0];
  std::string_view leaf = call->text;
  if (is_name(receiver, "self")) {
    if (is_component(leaf)) {
      // The component's hook moves its arguments and returns where the first tensor was.
      return first_tensor(eval_args(call));
    }
    if (const FunctionDef *m = frame_->pipeline->find_method(leaf))
      return call_function(m, call, eval_args(call), true, nullptr);
    return std::nullopt;
  }
  if (receiver->kind != ExprKind::Attribute || !is_name(receiver->operands[0], "self"))
    return std::nullopt;
  if (!is_component(receiver->text)) {
    const PipelineComponents *components = running_pipeline();
    if (!components || std::find(components->schedulers.begin(), components->schedulers.end(),
                                 receiver->text) == components->schedulers.end())
      return std::nullopt;
    Args args = eval_args(call);
    if (std::optional<Value> out = scheduler_call(call, args))
      return out;
    return first_tensor(args);
  }
  Args args = eval_args(call);
  if (leaf == "forward" || leaf == "__call__")
    return first_tensor(args);
  // `self.image_normalizer.to(x.device)`: the component is where the code put it from now on.
  if (leaf == "to" && !args.positional.empty() && args.positional[0].has_origins()) {
    frame_->env[moved_component_key(receiver->text)] = args.positional[0];
    return Value::neutral();
  }
  // A method that says it returns no tensor (`predict_num_frames(...) -> int`).
  if (const PipelineComponents *components = running_pipeline()) {
    auto cls = components->classes.find(receiver->text);
    if (cls != components->classes.end())
      if (const FunctionDef *m = cls->second->find_method(leaf);
          m && !m->returns.empty() && !tensorish_annotation(m->returns))
        return Value::neutral();
  }
  // Reached without `forward` (`self.vae.decode(latents)`): the root's hook does not run with
  // the arguments, but every submodule holding weights has a hook of its own that moves what it
  // is handed to the component's device (accelerate's attach_execution_device_hook), and nothing
  // brings the result back: it stays on the component's GPU.
  std::string_view label = intern(std::string(receiver->text) + "." + std::string(leaf));
  return component_tensor(label, call->range);
}

// A diffusers scheduler combines the samples it is handed on their devices (it moves only its own
// tables and the timesteps there): `add_noise(original_samples, noise, timesteps)`,
// `scale_noise(sample, timestep, noise)`, `step(model_output, timestep, sample)`.
std::optional<Value> Interpreter::scheduler_call(const Expr *call, const Args &args) {
  std::string_view leaf = call->text;
  std::vector<std::pair<size_t, std::string_view>> samples; // position, keyword
  if (leaf == "add_noise")
    samples = {{0, "original_samples"}, {1, "noise"}};
  else if (leaf == "scale_noise")
    samples = {{0, "sample"}, {2, "noise"}};
  else if (leaf == "step")
    samples = {{2, "sample"}, {0, "model_output"}};
  else
    return std::nullopt;
  Site site;
  site.kind = SiteKind::Arithmetic;
  site.expr = call;
  site.operation = call_spelling(call, call->operands[0]);
  Value first;
  for (const auto &[position, keyword] : samples) {
    const Value *v = position < args.positional.size() ? &args.positional[position] : nullptr;
    const Expr *e = v ? call->operands[position + 1] : nullptr;
    for (size_t k = 0; !v && k < call->keywords.size(); ++k)
      if (call->keywords[k].name == keyword) {
        v = &args.keywords[k].second;
        e = call->keywords[k].value;
      }
    if (!v || v->kind != Value::Kind::Tensor || !v->has_origins() || !e)
      continue;
    if (!first.has_origins())
      first = *v;
    site.operands.push_back({e, v->origins});
  }
  if (site.operands.size() > 1)
    emit(site);
  return first;
}

} // namespace devlint
