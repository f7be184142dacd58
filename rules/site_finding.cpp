#include "rules/site_finding.h"

#include "model/text.h"
#include "rules/origin_text.h"

namespace devlint {
namespace {

constexpr size_t kMaxFirstLine = 200; // message first lines stay short, like Ruff's

} // namespace

std::string combines_message(const SiteContext &context, std::string_view tail_text) {
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
    if (moved.kind == OriginKind::LayerIteration && anchor.kind == OriginKind::LayerIteration &&
        moved.label == anchor.label)
      return op + " combines per-iteration outputs of `self." + std::string(moved.label) +
             "` collected in " + list + tail;
    return op + " combines elements of " + list + " " + short_origin(moved, site) + " and " +
           short_origin(anchor, site) + tail;
  }
  // A tensor handed to a submodule meets the other operand in the submodule's code.
  const std::string verb = site.handed_use.expr ? " is handed " : " combines ";
  const std::string joint = site.handed_use.expr ? " beside " : " with ";
  for (size_t width : {size_t(48), size_t(24)}) {
    auto text = [&](const Expr *e) {
      return "`" + shorten_snippet(file.slice(e->range), width) + "`";
    };
    std::string line = op + verb + text(moved_expr) + " (" + short_origin(moved, site) + ")" +
                       joint + text(anchor_expr) + " (" + short_origin(anchor, site) + ")" + tail;
    if (line.size() <= kMaxFirstLine)
      return line;
    line = op + verb + text(moved_expr) + joint + text(anchor_expr) + tail;
    if (line.size() <= kMaxFirstLine)
      return line;
  }
  return op + " combines operands" + tail;
}

Finding site_finding(const Rule &rule, const SiteContext &context, std::string message) {
  const Site &site = context.site;
  const Mismatch &m = context.mismatch;
  const UnitFacts &facts = context.facts;
  const SourceFile &file = *site.file->source;
  Finding f;
  f.code = std::string(rule.info().code);
  f.rule_name = std::string(rule.info().name);
  f.file = &file;
  f.range = site.expr->range;
  const Expr *anchor_expr = site.operands[m.anchor].expr;
  const Expr *moved_expr = site.operands[m.moved.front()].expr;
  f.message = std::move(message);
  // The placement story only explains activations: a CPU tensor fails on any map.
  bool state_or_fresh = m.moved_origin->kind == OriginKind::Fresh ||
                        m.moved_origin->kind == OriginKind::PlainTensor ||
                        m.anchor_origin->kind == OriginKind::Fresh;
  bool held = m.moved_origin->kind == OriginKind::HeldState ||
              m.anchor_origin->kind == OriginKind::HeldState;
  const Origin *setup = !m.moved_origin->allocated_by.empty()    ? m.moved_origin
                        : !m.anchor_origin->allocated_by.empty() ? m.anchor_origin
                                                                 : nullptr;
  if (setup)
    f.why = "`" + std::string(setup->allocated_by) +
            "` allocates this state alike for every layer, on one device the layer does not "
            "choose; dispatch moves parameters and buffers, not tensors stored on a module "
            "afterwards, so a layer on another device reads it there";
  else if (held)
    f.why = "a state object (a cache) is built once, with its tensors on one device, and handed "
            "to every layer; hooks move tensor arguments, not the tensors an object holds, so "
            "a layer on another device reads them where they were allocated";
  else if (!state_or_fresh && !facts.why.empty())
    f.why = facts.why;
  if (m.anchor_origin->layer_weights || m.moved_origin->layer_weights)
    f.why = "on one GPU no hook moves a layer's input: it meets the layer's weights on the CPU, "
            "as it was made";
  if (site.handed_use.expr)
    f.why = "on one GPU no hook moves a submodule's arguments: its forward gets this tensor on "
            "the CPU, as it was made, and uses it with the model's tensors";
  if (site.kind == SiteKind::Loss && facts.may_split && facts.on_first_chain)
    f.why = "user inputs such as labels are moved to the first GPU, the head sits on the last";
  auto related = [&](const Origin *o, std::string role) {
    RelatedLocation r;
    r.path = o->file ? o->file->source->display_path : file.display_path;
    r.range = o->range;
    r.message = std::move(role);
    f.origins.push_back(std::move(r));
  };
  related(m.moved_origin, "`" + shorten_snippet(file.slice(moved_expr->range)) +
                              "`: " + describe_origin(*m.moved_origin, site));
  std::string anchor_text = "`" + shorten_snippet(file.slice(anchor_expr->range)) +
                            "`: " + describe_origin(*m.anchor_origin, site);
  // Per-iteration outputs gathered in one list: one origin, said once.
  if (anchor_text != f.origins.back().message ||
      m.anchor_origin->range.begin != f.origins.back().range.begin)
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
  attach_site_fix(f, rule.info().fix, site, m);
  if (site.unit)
    f.unit_class = std::string(site.unit->name);
  for (auto [origin, expr] :
       {std::pair{m.moved_origin, moved_expr}, {m.anchor_origin, anchor_expr}})
    f.operand_origins.push_back({static_cast<uint8_t>(origin->kind), std::string(origin->label),
                                 origin->earlier_iteration,
                                 std::string(shorten_snippet(file.slice(expr->range)))});
  return f;
}

} // namespace devlint
