#include "rules/site_finding.h"

#include <cctype>
#include <cstdint>
#include <functional>
#include <vector>

#include "model/text.h"
#include "rules/origin_text.h"

namespace devlint {
namespace {

constexpr size_t kMaxFirstLine = 200; // the data formats' message: with the operands' origins
constexpr size_t kMaxSummary = 100;   // what a terminal shows first, like Ruff's short lines

// Whether the dotted name `e` (`nn.functional`, `torch`, `F`) starts with a module the file
// imports (`import torch`, `import torch.nn.functional as F`, `from torch import nn`): its
// calls are functions of that module, not methods of a tensor.
bool names_imported_module(const SyntaxFile &syntax, const Expr *e) {
  while (e->kind == ExprKind::Attribute && !e->operands.empty())
    e = e->operands[0];
  if (e->kind != ExprKind::Name)
    return false;
  for (const ImportedName &imported : syntax.imports)
    if (imported.local_name == e->text)
      return imported.name.empty() ||
             std::islower(static_cast<unsigned char>(imported.name.front())) != 0;
  return false;
}

// `e` in at most `width` characters for a short first line: its text; else with call arguments
// and subscripts elided (`logits.view(...)`); else the tensor a chain of method calls and
// subscripts starts from (`shift_labels` for `shift_labels.view(-1)`: a view is on its base's
// device); else its text cut short. Names stay whole, even over `width`.
std::string short_operand(const SyntaxFile &syntax, const Expr *e, size_t width) {
  const SourceFile &file = *syntax.source;
  std::string text = shorten_snippet(file.slice(e->range), SIZE_MAX);
  if (text.size() <= width)
    return text;
  std::function<std::string(const Expr *)> elided = [&](const Expr *x) -> std::string {
    // Error recovery can leave an operand out: such a node keeps its text.
    size_t needed = x->kind == ExprKind::BinaryOp || x->kind == ExprKind::Compare ? 2 : 1;
    if (x->kind != ExprKind::Name && x->operands.size() < needed)
      return shorten_snippet(file.slice(x->range), SIZE_MAX);
    switch (x->kind) {
    case ExprKind::Name:
      return std::string(x->text);
    case ExprKind::Attribute:
      return elided(x->operands[0]) + "." + std::string(x->text);
    case ExprKind::Call:
      return elided(x->operands[0]) +
             (x->operands.size() > 1 || !x->keywords.empty() ? "(...)" : "()");
    case ExprKind::Subscript:
      return elided(x->operands[0]) + "[...]";
    case ExprKind::BinaryOp:
    case ExprKind::Compare:
      return elided(x->operands[0]) + " " + std::string(x->text) + " " + elided(x->operands[1]);
    default:
      return shorten_snippet(file.slice(x->range), SIZE_MAX);
    }
  };
  std::string short_form = elided(e);
  if (short_form.size() <= width)
    return short_form;
  const Expr *base = e;
  while (true) {
    if (base->operands.empty() ||
        (base->kind == ExprKind::Call && base->operands[0]->operands.empty()))
      break;
    if (base->kind == ExprKind::Subscript) {
      base = base->operands[0];
    } else if (base->kind == ExprKind::Call && base->operands[0]->kind == ExprKind::Attribute &&
               !(base->operands[0]->operands[0]->kind == ExprKind::Name &&
                 base->operands[0]->operands[0]->text == "self") && // `self.proj(x)`: a module
               !names_imported_module(syntax, base->operands[0]->operands[0])) {
      base = base->operands[0]->operands[0];
    } else {
      break;
    }
  }
  // The call the operand starts from (a module's `self.position_embeddings(...)`, a module
  // function `nn.functional.normalize(...)`, else its name alone), not a cut `nn.functional...`.
  if (base->kind == ExprKind::Call && base != e)
    if (std::string called = elided(base); called.size() <= width)
      return called;
  if (base->kind == ExprKind::Call && base->operands[0]->kind == ExprKind::Attribute &&
      !base->operands[0]->operands.empty() &&
      names_imported_module(syntax, base->operands[0]->operands[0]))
    if (std::string leaf = std::string(base->operands[0]->text) + "(...)"; leaf.size() <= width)
      return leaf;
  // A name is never cut short: `image_features`, not `image_fea...`.
  if (base->kind == ExprKind::Name || base->kind == ExprKind::Attribute) {
    std::string base_text = shorten_snippet(file.slice(base->range), SIZE_MAX);
    if (base_text.size() <= width || base_text == short_form)
      return base_text;
  }
  return shorten_snippet(text, width);
}

// The first line naming what `context`'s site combines, within `max_size` characters: with each
// operand's origin in parentheses where `with_origins` and they fit, else the operands alone,
// shortened step by step, else only the operation.
std::string combines_line(const SiteContext &context, std::string_view tail_text, size_t max_size,
                          bool with_origins) {
  const Site &site = context.site;
  const Mismatch &m = context.mismatch;
  const SourceFile &file = *site.file->source;
  const Expr *anchor_expr = site.operands[m.anchor].expr;
  const Expr *moved_expr = site.operands[m.moved.front()].expr;
  std::string op =
      "`" + (site.file->explicit_placement ? cpp_spelling(site.operation) : site.operation) + "`";
  std::string tail(tail_text);
  const Origin &moved = *m.moved_origin;
  const Origin &anchor = *m.anchor_origin;
  if (moved_expr == anchor_expr) {
    // One list holds both: name the list and what differs between its elements.
    std::string list = "`" + shorten_snippet(file.slice(anchor_expr->range)) + "`";
    if (with_origins) {
      if (moved.kind == OriginKind::LayerIteration && anchor.kind == OriginKind::LayerIteration &&
          moved.label == anchor.label)
        return op + " combines per-iteration outputs of `self." + std::string(moved.label) +
               "` collected in " + list + tail;
      return op + " combines elements of " + list + " " + short_origin(moved, site) + " and " +
             short_origin(anchor, site) + tail;
    }
    std::string line =
        op + " combines elements of `" + short_operand(*site.file, anchor_expr, 32) + "`" + tail;
    return line.size() <= max_size ? line : op + " combines elements of one list" + tail;
  }
  // A tensor handed to a submodule meets the other operand in the submodule's code.
  const std::string verb = site.handed_use.expr ? " is handed " : " combines ";
  const std::string joint = site.handed_use.expr ? " beside " : " with ";
  const std::vector<size_t> widths =
      with_origins ? std::vector<size_t>{48, 24} : std::vector<size_t>{32, 24, 16, 12};
  std::string shortest;
  for (size_t width : widths) {
    auto text = [&](const Expr *e) {
      return "`" +
             (with_origins ? shorten_snippet(file.slice(e->range), width)
                           : short_operand(*site.file, e, width)) +
             "`";
    };
    if (with_origins) {
      std::string line = op + verb + text(moved_expr) + " (" + short_origin(moved, site) + ")" +
                         joint + text(anchor_expr) + " (" + short_origin(anchor, site) + ")" + tail;
      if (line.size() <= max_size)
        return line;
    }
    std::string line = op + verb + text(moved_expr) + joint + text(anchor_expr) + tail;
    if (line.size() <= max_size)
      return line;
    shortest = std::move(line);
  }
  // Whole names may take the short line a little over its size; a long one is not a short line.
  if (!with_origins && shortest.size() <= max_size + max_size / 5)
    return shortest;
  return op + " combines operands" + tail;
}

} // namespace

std::string combines_message(const SiteContext &context, std::string_view tail) {
  return combines_line(context, tail, kMaxFirstLine, /*with_origins=*/true);
}

Finding combines_finding(const Rule &rule, const SiteContext &context, std::string_view tail) {
  Finding f = site_finding(rule, context, combines_message(context, tail));
  if (f.message.size() > kMaxSummary)
    f.summary = combines_line(context, tail, kMaxSummary, /*with_origins=*/false);
  return f;
}

namespace {

// At most this many names are quoted; a finding must not repeat a list of thousands.
constexpr size_t kListedNamesShown = 8;

// "_no_split_modules = ['GLMBlock'] (from this package)"
std::string no_split_text(const ModuleClass &cls) {
  std::string out = "_no_split_modules = [";
  const auto &listed = cls.scope->no_split_modules;
  for (size_t i = 0; i < listed.size() && i < kListedNamesShown; ++i) {
    if (i)
      out += ", ";
    out += "'" + listed[i] + "'";
  }
  if (listed.size() > kListedNamesShown)
    out += ", ... (" + std::to_string(listed.size()) + " names)";
  out += "]";
  // Say where the list came from: the package, a base's source found on a search path, the
  // built-in transformers summary, the settings.
  std::vector<std::string> sources;
  if (cls.scope->declared_in_package)
    sources.push_back("this package");
  if (!cls.scope->external_source.empty())
    sources.push_back(cls.scope->external_source);
  if (cls.scope->extended_by_settings)
    sources.push_back("the no-split-modules setting");
  for (size_t i = 0; i < sources.size(); ++i)
    out += (i ? "; " : " (from ") + sources[i];
  if (!sources.empty())
    out += ")";
  return out;
}

// Why accelerate may split the running class, or keeps it whole, in one sentence.
std::string split_reason_text(const UnitFacts &facts, const ModuleClass *unit) {
  if (!unit)
    return "";
  const std::string name(unit->name);
  switch (facts.split_reason) {
  case SplitReason::NoListInModel: // only reached with --hand-made-maps
    if (!unit->scope->unknown_list_base.empty())
      return "this model builds on " + unit->scope->unknown_list_base +
             ", whose source devlint did not find, so whether it declares _no_split_modules for "
             "device_map=\"auto\" is unknown; a hand-written device map may split " +
             name + " and place its submodules and parameters on different devices";
    return "no PreTrainedModel of this model declares _no_split_modules, so a hand-written "
           "device map may split " +
           name + " and place its submodules and parameters on different devices";
  case SplitReason::NoLoader: // only reached with --hand-made-maps
    return "no class of this package is loaded by from_pretrained, so only a device map built "
           "by hand (accelerate's infer_auto_device_map and dispatch_model) splits " +
           name + "; such a map may place its submodules and parameters on different devices";
  case SplitReason::PlacedByHand:
    return name + " moves some of its submodules to a device itself (`.to(...)`) and leaves the "
                  "others where they were made or loaded: nothing moves them together";
  case SplitReason::NotListed:
    return name + " is not in " + no_split_text(*unit) +
           ", so accelerate may split it and place its submodules and parameters on different "
           "devices";
  case SplitReason::Listed:
    return name + " is in " + no_split_text(*unit);
  case SplitReason::None:
    break;
  }
  return "";
}

// Why a tensor made or left on the CPU fails, whatever the device map: `cpu_origin` is a fresh
// tensor (no `device=`, or `.cpu()`) or an unregistered tensor attribute, not moved since.
std::string cpu_tensor_text(const Origin &cpu_origin, const Site &site) {
  const bool cpp = site.file && site.file->explicit_placement;
  const std::string label =
      cpp ? cpp_spelling(std::string(cpu_origin.label)) : std::string(cpu_origin.label);
  if (cpu_origin.kind == OriginKind::PlainTensor && cpu_origin.has(OriginFact::ModeCache))
    return "`self." + label +
           "` is cached by an override of `train()`, which `model.eval()` runs, and "
           "`from_pretrained` calls `model.eval()` before a script moves the model with "
           "`.to()`; `.to()` moves parameters and buffers, not this plain attribute, so it "
           "stays on the CPU and meets the other operand there when the model runs on one GPU";
  if (cpu_origin.kind == OriginKind::PlainTensor)
    return cpp ? "tensor member `" + label +
                     "` is not a registered parameter or buffer: `->to()` moves parameters and "
                     "buffers only, so it stays on the CPU and meets the other operand there "
                     "when the module runs on a GPU"
               : "`self." + label +
                     "` is a plain tensor attribute, not a registered parameter or buffer: "
                     "neither `.to()` nor a device map's dispatch moves it, so it stays on the "
                     "CPU where it was made and meets the other operand there whenever the model "
                     "runs on a GPU, one GPU included";
  std::string made = label == "cpu" ? "`.cpu()` moves this tensor to the CPU"
                     : label.rfind(cpp ? "torch::data::" : "torch.data.", 0) == 0
                         ? "a `" + label + "` batch is made on the CPU"
                         : "`" + label + "(...)` without a device makes this tensor on the CPU, " +
                               "the default device";
  return made +
         (cpp ? "; LibTorch moves no tensor by itself, so when the module runs on a GPU it meets "
                "the other operand on another device"
              : "; no hook moves a tensor made inside a method (hooks move a module's arguments "
                "and outputs), so whenever the model runs on a GPU, one GPU included, it meets "
                "the other operand on another device");
}

// The operand that sits on the CPU on every map, if one does.
const Origin *cpu_origin_of(const Mismatch &m) {
  for (const Origin *o : {m.moved_origin, m.anchor_origin})
    if ((o->kind == OriginKind::Fresh || o->kind == OriginKind::PlainTensor) && o->moved_to.empty())
      return o;
  return nullptr;
}

// Where the code itself put an operand: `cuda:1`, the device in `gpu`; empty if it did not.
std::string placed_where(const Origin &o, const Site &site) {
  // A member module script code moved on its own: where it moved it.
  if (o.moved_by_caller)
    return placed_where(*o.moved_by_caller, site);
  // A member module a LibTorch constructor placed on a literal device: its outputs are there.
  if (o.kind == OriginKind::Child && site.unit && o.moved_to.empty()) {
    const ChildDecl *child = site.unit->find_child(o.label.substr(0, o.label.find('.')));
    if (child && !child->placed_device.empty())
      return "`" + child->placed_device + "`";
  }
  if (!o.moved_to.empty())
    return "`" + std::string(o.moved_to) + "`";
  if (o.kind == OriginKind::LiteralDevice)
    return "`" + std::string(o.label) + "`";
  if (o.kind == OriginKind::RunTimeDevice)
    return "the device in `" + std::string(o.label) + "`";
  return "";
}

// Operands the code placed on devices it names (LibTorch, or `.to(...)` in a script): nothing
// moves them to one device but the code.
std::string placed_by_code_text(const Mismatch &m, const Site &site) {
  const std::string moved = placed_where(*m.moved_origin, site);
  const std::string anchor = placed_where(*m.anchor_origin, site);
  const std::string nothing_moves = site.file && site.file->explicit_placement
                                        ? "LibTorch moves no tensor by itself"
                                        : "no hook moves a tensor the code placed";
  if (!moved.empty() && !anchor.empty())
    return "the code places one operand on " + moved + " and the other on " + anchor + ", and " +
           nothing_moves + ": they meet here on different devices";
  const std::string one = !moved.empty() ? moved : anchor;
  // A member module script code moved apart from the rest of its model.
  if (!one.empty() && (m.moved_origin->moved_by_caller || m.anchor_origin->moved_by_caller))
    return "the code moves the module that made one operand to " + one +
           ", apart from the rest of the model, and " + nothing_moves +
           ": it meets the other operand on the device of the rest of the model";
  if (!one.empty())
    return "the code places one operand on " + one + " and " + nothing_moves +
           ", so it meets the other operand wherever that one was left";
  return "";
}

// A site in a diffusers pipeline's own code (or a helper it inlined).
std::string pipeline_text() {
  return "a pipeline loaded with `device_map=\"balanced\"` deals its components to GPUs whole; a "
         "component's hook moves what its `forward` is handed and returns the output where the "
         "first tensor argument was, and a method reached without `forward` (`encode`, "
         "`decode`) returns on the component's GPU, but the pipeline is no module and nothing "
         "moves what its own code combines: each operand stays on the device of the component "
         "that made it";
}

} // namespace

// The default explanation: by what made the operands (state allocated for every layer, a cache
// object, a layer's weights, a tensor handed to a submodule) and, for the model's activations, by
// whether accelerate may split the running class.
std::string SiteRule::why(const SiteContext &context) const {
  const Site &site = context.site;
  const Mismatch &m = context.mismatch;
  if (site.pipeline)
    return pipeline_text();
  if (site.hand_parallel)
    return "after `parallelize()` (transformers' naive model parallelism, `self.model_parallel`) "
           "the blocks sit on the GPUs its device map gives them, the heads where the code "
           "moved them, and no hook moves what a module is handed: this tensor reaches the "
           "module where it was made and meets the module's weights there";
  if (site.handed_use.expr)
    return "on one GPU no hook moves a submodule's arguments: its forward gets this tensor on "
           "the CPU, as it was made, and uses it with the model's tensors";
  if (m.anchor_origin->has(OriginFact::LayerWeights) ||
      m.moved_origin->has(OriginFact::LayerWeights))
    return "on one GPU no hook moves a layer's input: it meets the layer's weights on the CPU, "
           "as it was made";
  const Origin *setup = !m.moved_origin->allocated_by.empty()    ? m.moved_origin
                        : !m.anchor_origin->allocated_by.empty() ? m.anchor_origin
                                                                 : nullptr;
  if (setup)
    return "`" + std::string(setup->allocated_by) +
           "` allocates this state alike for every layer, on one device the layer does not "
           "choose; dispatch moves parameters and buffers, not tensors stored on a module "
           "afterwards, so a layer on another device reads it there";
  if (m.moved_origin->kind == OriginKind::HeldState ||
      m.anchor_origin->kind == OriginKind::HeldState)
    return "a state object (a cache) is built once, with its tensors on one device, and handed "
           "to every layer; hooks move tensor arguments, not the tensors an object holds, so a "
           "layer on another device reads them where they were allocated";
  // The placement story only explains activations: a CPU tensor fails on any map.
  if (const Origin *cpu = cpu_origin_of(m))
    return cpu_tensor_text(*cpu, site);
  std::string split = split_reason_text(context.facts, site.unit);
  return split.empty() ? placed_by_code_text(m, site) : split;
}

Finding site_finding(const Rule &rule, const SiteContext &context, std::string message) {
  const Site &site = context.site;
  const Mismatch &m = context.mismatch;
  const SourceFile &file = *site.file->source;
  Finding f;
  f.code = std::string(rule.info().code);
  f.rule_name = std::string(rule.info().name);
  f.file = &file;
  f.range = site.expr->range;
  const Expr *anchor_expr = site.operands[m.anchor].expr;
  const Expr *moved_expr = site.operands[m.moved.front()].expr;
  f.message = std::move(message);
  if (const SiteRule *site_rule = rule.site_rule())
    f.why = site_rule->why(context);
  // Where the value was made: by the call of a module holding nothing that computed it, if one did.
  auto made_at = [](const Origin *o) {
    return o->empty_child_file ? o->empty_child_call : o->range;
  };
  auto related = [&](const Origin *o, std::string role) {
    RelatedLocation r;
    const SyntaxFile *made_in = o->empty_child_file ? o->empty_child_file : o->file;
    r.path = made_in ? made_in->source->display_path : file.display_path;
    r.range = made_at(o);
    r.message = std::move(role);
    f.origins.push_back(std::move(r));
  };
  related(m.moved_origin, "`" + shorten_snippet(file.slice(moved_expr->range)) +
                              "`: " + describe_origin(*m.moved_origin, site));
  std::string anchor_text = "`" + shorten_snippet(file.slice(anchor_expr->range)) +
                            "`: " + describe_origin(*m.anchor_origin, site);
  // Per-iteration outputs gathered in one list: one origin, said once.
  if (anchor_text != f.origins.back().message ||
      made_at(m.anchor_origin).begin != f.origins.back().range.begin)
    related(m.anchor_origin, std::move(anchor_text));
  // "`expr`: where `Class.method` <does>, line N".
  auto where = [&](const CodePlace &place, const std::string &does) {
    if (!place.known())
      return;
    const SourceFile &source = *place.file->source;
    RelatedLocation r;
    r.path = source.display_path;
    r.range = place.expr->range;
    std::string who = place.unit ? std::string(place.unit->name) + "." : "";
    who += std::string(place.function->name);
    r.message = "`" + shorten_snippet(source.slice(place.expr->range)) + "`: where `" + who + "` " +
                does + ", line " + std::to_string(place.expr->range.line);
    f.origins.push_back(std::move(r));
  };
  where(site.handed_use, "uses it");
  where(site.entry_call, "hands the operands to the helper");
  if (site.pipeline) {
    f.level = FindingLevel::Warning;
    f.placement = "fails when the pipeline is loaded with `device_map=\"balanced\"` on 2 or "
                  "more GPUs and these components land on different ones";
  }
  // A hand-made placement, as a hand-written map that splits a model refusing "auto" is.
  if (site.hand_parallel) {
    f.level = FindingLevel::Warning;
    f.placement = "fails only after `parallelize()`: under a device map, hooks move what a "
                  "module is handed";
  }
  attach_site_fix(f, rule.info().fix, site, m);
  if (site.unit)
    f.unit_class = std::string(site.unit->name);
  for (auto [origin, operand] : {std::pair{m.moved_origin, &site.operands[m.moved.front()]},
                                 {m.anchor_origin, &site.operands[m.anchor]}})
    f.operand_origins.push_back(
        {origin->kind, std::string(origin->label), origin->has(OriginFact::EarlierIteration),
         std::string(shorten_snippet(file.slice(operand->expr->range))),
         std::string(origin->through_empty_child), origin->has(OriginFact::CastToCuda),
         operand->role == OperandRole::Index,
         origin->kind == OriginKind::Input && origin->function && origin->unit &&
             origin->function->name != "forward"});
  return f;
}

} // namespace devlint
