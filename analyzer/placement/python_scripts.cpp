// Python script code (docs/DEVICE_MODEL.md section 2b): a file's top-level statements, then its
// free functions with the names the top level bound as their globals. Nothing moves a model's
// inputs there: what the code placed stays where it placed it, and a device chosen at run time
// is one device value (placement/run_time_devices.cpp), as in LibTorch code.
#include <algorithm>
#include <string>

#include "model/text.h"
#include "placement/interpreter.h"
#include "placement/operations/call_shapes.h"

namespace devlint {

bool Interpreter::python_script() const {
  return frame_->script && frame_->file && !frame_->file->explicit_placement;
}

void Interpreter::analyze_script(const SyntaxFile *file) {
  statements_run_ = 0;
  loop_depth_ = 0;
  Frame frame;
  frame.outer_loops = loops_.size();
  frame.file = file;
  frame.script = true;
  Frame *saved = frame_;
  frame_ = &frame;
  const Env *saved_globals = script_globals_;
  const SyntaxFile *saved_globals_file = script_globals_file_;
  // The functions the top level calls read its names as they are at the call.
  script_globals_ = &frame.env;
  script_globals_file_ = file;
  for (const Stmt *s : file->body)
    if (s->kind != StmtKind::FunctionDef && s->kind != StmtKind::ClassDef)
      exec(s);
  // Each free function once more as script code, called after the top level ran: a model the
  // top level placed is placed inside it (`embed(texts)` calling the module's `model`), its
  // parameters are unknown. Its sites other than model calls were checked when it ran as a
  // function of the package; a site both runs reach is reported once.
  if (!file->explicit_placement)
    for (const FunctionDef *fn : file->functions)
      analyze_script_function(fn, file);
  script_globals_ = saved_globals;
  script_globals_file_ = saved_globals_file;
  frame_ = saved;
}

void Interpreter::analyze_script_function(const FunctionDef *fn, const SyntaxFile *file) {
  statements_run_ = 0;
  loop_depth_ = 0;
  Frame frame;
  frame.outer_loops = loops_.size();
  frame.function = fn;
  frame.file = file;
  frame.script = true;
  Frame *saved = frame_;
  frame_ = &frame;
  seed_globals(frame, fn);
  for (const Parameter &p : fn->parameters)
    frame.env[p.name] = input_for(p);
  call_stack_.push_back(fn);
  exec_block(fn->body);
  call_stack_.pop_back();
  frame_ = saved;
}

void Interpreter::seed_globals(Frame &frame, const FunctionDef *fn) const {
  if (!script_globals_ || frame.file != script_globals_file_ || !frame.script ||
      frame.file->explicit_placement ||
      std::find(frame.file->functions.begin(), frame.file->functions.end(), fn) ==
          frame.file->functions.end())
    return;
  // Copied into every call: past the size where joins go coarse, a generated top level of
  // thousands of names would make each call cost its size (the functions then see no globals).
  if (script_globals_->size() > kMaxJoinedEnvironment)
    return;
  // A name the top level left unknown reads as unknown anyway: only what the analysis knows.
  for (const auto &[name, value] : *script_globals_)
    if (value.kind != Value::Kind::Neutral)
      frame.env.emplace(name, value);
}

// `model.to(args.device)`, `x.to(device)` with a `device` parameter: in script code a device the
// code chose at run time, even where the analysis cannot tell which, when the code spells it as a
// device (docs/DEVICE_MODEL.md section 2b). Not a tensor's `.device`, nor a parameter that
// defaults to the CPU.
std::optional<Value> Interpreter::unknown_script_device(const Expr *device_expr, const Value &v) {
  if (!python_script() || !device_expr || v.kind == Value::Kind::Str || is_run_time_device(v) ||
      !names_device(device_expr) ||
      (device_expr->kind != ExprKind::Name && device_expr->kind != ExprKind::Attribute))
    return std::nullopt;
  const FunctionDef *fn = frame_->function;
  if (v.has_origins()) {
    // Only the running function's own parameter, as it came in.
    bool parameter = device_expr->kind == ExprKind::Name &&
                     std::all_of(v.origins.begin(), v.origins.end(), [&](const Origin *o) {
                       return o->kind == OriginKind::Skip && o->label == device_expr->text &&
                              o->function == fn && o->moved_to.empty();
                     });
    if (!parameter)
      return std::nullopt;
  }
  if (fn && device_expr->kind == ExprKind::Name)
    for (const Parameter &p : fn->parameters)
      if (p.name == device_expr->text && p.default_value &&
          p.default_value->kind == ExprKind::String && p.default_value->text == "cpu")
        return std::nullopt;
  std::string_view text = frame_->file->source->slice(device_expr->range);
  return run_time_device(
      text, intern(std::string(text) + "@" + std::string(fn ? fn->name : std::string_view{})),
      device_expr->range);
}

// An object the analysis does not know (a model loaded or built in the script), or the running
// function's parameter as it came in: `.to(device)` places it, in place for a module.
bool Interpreter::script_object(const Value &v) const {
  if (v.kind == Value::Kind::Neutral)
    return true;
  if (!python_script() || v.kind != Value::Kind::Tensor || v.origins.size() != 1)
    return false;
  const Origin *o = v.origins[0];
  return o->kind == OriginKind::Skip && o->has(OriginFact::MaybeNotTensor) &&
         o->function == frame_->function && o->moved_to.empty();
}

// `model.to(device)` / `model.cuda()` as a statement moves a module in place: the name now holds
// a placed model (a tensor's `.to()` returns a copy and leaves the tensor where it was).
bool Interpreter::moves_script_object_in_place(const Stmt *s) {
  if (!python_script() || !s->value || s->value->kind != ExprKind::Call)
    return false;
  const Expr *callee = s->value->operands[0];
  if (callee->kind != ExprKind::Attribute || (s->value->text != "to" && s->value->text != "cuda"))
    return false;
  const Expr *object = callee->operands[0];
  if (object->kind != ExprKind::Name)
    return false;
  auto held = frame_->env.find(object->text);
  if (held != frame_->env.end() && !script_object(held->second))
    return false;
  Value placed = eval(s->value);
  if (!has_literal(placed))
    return true;
  frame_->env[object->text] = placed;
  return true;
}

// A diffusers pipeline (`StableDiffusionPipeline.from_pretrained(...)`), a transformers
// `pipeline(...)`, a data-parallel wrapper (`nn.DataParallel(model)`): not a module moved as a
// whole; calling it moves the tensors it is given where its modules are.
bool Interpreter::moves_its_inputs(const Value &object) {
  std::string_view callee = object.made_by;
  size_t dot = callee.rfind('.');
  std::string_view leaf = dot == std::string_view::npos ? callee : callee.substr(dot + 1);
  return callee.find("Pipeline") != std::string_view::npos || leaf == "pipeline" ||
         callee.find("DataParallel") != std::string_view::npos;
}

bool Interpreter::sets_default_device(const SyntaxFile *file) {
  auto known = default_device_files_.find(file);
  if (known != default_device_files_.end())
    return known->second;
  // `torch.set_default_device("cuda")`, `with torch.device("cuda"):`: constructors without a
  // device make their tensors there, not on the CPU.
  const std::string &text = file->source->text;
  bool sets = text.find("set_default_device") != std::string::npos ||
              text.find("set_default_tensor_type") != std::string::npos ||
              text.find("with torch.device(") != std::string::npos;
  default_device_files_[file] = sets;
  return sets;
}

Value Interpreter::unknown_call_result(const Expr *call, Value v) const {
  if (!python_script())
    return v;
  if (v.kind == Value::Kind::Neutral) {
    v.made_by = frame_->file->source->slice(call->operands[0]->range);
    return v;
  }
  // A function the analysis cannot see may move what it is given (`to_device(batch, device)`)
  // or wrap a model in one that moves its inputs (`accelerator.prepare(model)`,
  // `DataParallel(model)`): what it returns is neither the CPU tensor nor the placed model.
  v.origins.erase(std::remove_if(v.origins.begin(), v.origins.end(),
                                 [](const Origin *o) {
                                   return made_on_cpu(o) || o->has(OriginFact::PlacedObject);
                                 }),
                  v.origins.end());
  if (!v.has_origins() && v.kind == Value::Kind::Tensor)
    v.kind = Value::Kind::Neutral;
  return v;
}

} // namespace devlint
