#include "placement/mismatch.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "placement/abstract_value.h"

namespace devlint {
namespace {

bool is_activation(const Origin *o) {
  return o->kind == OriginKind::Input || o->kind == OriginKind::Child ||
         o->kind == OriginKind::LayerIteration || o->kind == OriginKind::Skip;
}

} // namespace

std::vector<SiteKind> combining_site_kinds() {
  return {SiteKind::Concat,   SiteKind::Arithmetic, SiteKind::Matmul,   SiteKind::Loss,
          SiteKind::Indexing, SiteKind::IndexPut,   SiteKind::ModelCall};
}

namespace {

// One operand's origins with the device group each sits in; origins in no group (anywhere, or a
// literal device where it does not count) are left out.
struct Grouped {
  std::vector<std::pair<const Origin *, DeviceGroup>> groups;
};

// Where code is placed explicitly, a module's own device (Unit) is whatever its caller placed it
// on: a literal device may be that one. A device chosen at run time may be any device but the CPU
// it differs from (the code chose it to use a GPU), or, in LibTorch code, another device value.
// Two device values of a Python script may be one device (a helper's `device` parameter and the
// global its caller passes it): only the CPU differs from them for certain.
bool same_device(const DeviceGroup &a, const DeviceGroup &b, bool explicit_placement,
                 bool device_values_differ) {
  using Kind = DeviceGroup::Kind;
  auto run_time_may_be = [device_values_differ](const DeviceGroup &run_time,
                                                const DeviceGroup &other) {
    return run_time.kind == Kind::RunTime && other.kind != Kind::Cpu &&
           (other.kind != Kind::RunTime || !device_values_differ);
  };
  // A member module moved apart from its model by script code is not on the model's device.
  if ((a.apart_from_unit && b.kind == Kind::Unit) || (b.apart_from_unit && a.kind == Kind::Unit))
    return false;
  return a == b || (explicit_placement && ((a.kind == Kind::Unit && b.kind == Kind::Literal) ||
                                           (b.kind == Kind::Unit && a.kind == Kind::Literal) ||
                                           run_time_may_be(a, b) || run_time_may_be(b, a)));
}

// A value that may be a Python number, next to a CPU tensor, is taken to be one.
void drop_numbers(std::vector<Grouped> &operands) {
  std::vector<OriginSet> kept(operands.size());
  for (size_t i = 0; i < operands.size(); ++i)
    for (const auto &p : operands[i].groups)
      kept[i].push_back(p.first);
  drop_numbers_beside_cpu(kept, [&operands](const Origin *o) {
    return std::any_of(operands.begin(), operands.end(), [o](const Grouped &g) {
      return std::any_of(g.groups.begin(), g.groups.end(), [o](const auto &p) {
        return p.first == o && p.second.kind == DeviceGroup::Kind::Cpu;
      });
    });
  });
  for (size_t i = 0; i < operands.size(); ++i)
    operands[i].groups.erase(std::remove_if(operands[i].groups.begin(), operands[i].groups.end(),
                                            [&kept = kept[i]](const auto &p) {
                                              return std::find(kept.begin(), kept.end(), p.first) ==
                                                     kept.end();
                                            }),
                             operands[i].groups.end());
}

// Placed by the code itself: LibTorch code, and Python script code.
bool placed_explicitly(const Site &site) {
  return site.file && (site.file->explicit_placement || site.script);
}

std::vector<Grouped> group_operands(const Site &site, const PlacementModel &placement) {
  const bool explicit_placement = placed_explicitly(site);
  std::vector<Grouped> operands(site.operands.size());
  // `_apply_relative_embeddings` starts with `self.linear_pos(...)`, which is built only where
  // the class is kept whole: the rest of that method runs only there, on the class's one device.
  bool only_where_whole =
      site.unit_whole || (site.unit && site.members_read &&
                          std::any_of(site.members_read->begin(), site.members_read->end(),
                                      [&](std::string_view member) {
                                        return placement.unbuilt_where_split(site.unit, member);
                                      }));
  const bool apart_call =
      site.kind == SiteKind::ModelCall && !site.operands.empty() &&
      site.operands[0].role == OperandRole::Anchor &&
      std::any_of(site.operands[0].origins.begin(), site.operands[0].origins.end(),
                  [](const Origin *o) { return o->moved_by_caller != nullptr; });
  for (size_t i = 0; i < site.operands.size(); ++i) {
    for (const Origin *o : site.operands[i].origins) {
      DeviceGroup g = only_where_whole && (is_activation(o) || o->kind == OriginKind::Parameter)
                          ? DeviceGroup{DeviceGroup::Kind::Unit, "", false}
                          : placement.group_of(*o, site.unit);
      if (explicit_placement && g.kind == DeviceGroup::Kind::Literal && g.name == "cpu")
        g = {DeviceGroup::Kind::Cpu, "", false, g.apart_from_unit};
      // A device chosen at run time is a placement the code wrote, as a literal one is.
      bool literal = g.kind == DeviceGroup::Kind::Literal || g.kind == DeviceGroup::Kind::RunTime;
      bool cpu = g.kind == DeviceGroup::Kind::Cpu;
      // Literal devices are the model's business in Python script code, where a model is
      // called; where code is placed explicitly (LibTorch), they are where tensors are, anywhere.
      // The call of a member module moved apart from its model: the model's own tensors (its
      // inputs, its other modules' outputs) are on another device.
      bool model_device = g.kind == DeviceGroup::Kind::Unit && apart_call;
      if (g.any() || (literal && site.kind != SiteKind::ModelCall && !explicit_placement) ||
          (!literal && site.kind == SiteKind::ModelCall && !(explicit_placement && cpu) &&
           !model_device))
        continue;
      // PyTorch accepts CPU index tensors for a tensor on any device.
      if (site.operands[i].role == OperandRole::Index && cpu)
        continue;
      operands[i].groups.emplace_back(o, std::move(g));
    }
  }
  drop_numbers(operands);
  return operands;
}

// The anchor keeps its device: logits for a loss, the indexed tensor for indexing, else the first
// operand made by the model's activations (docs/DEVICE_MODEL.md section 4). Returns
// `site.operands.size()` when no operand can anchor.
size_t choose_anchor(const Site &site, const std::vector<Grouped> &operands) {
  size_t anchor = site.operands.size();
  for (size_t i = 0; i < site.operands.size(); ++i)
    if (site.operands[i].keeps_device() && !operands[i].groups.empty()) {
      anchor = i;
      break;
    }
  for (size_t i = 0; i < site.operands.size() && anchor == site.operands.size(); ++i) {
    if (operands[i].groups.empty() || site.operands[i].role == OperandRole::Target ||
        site.operands[i].role == OperandRole::Index)
      continue;
    bool activation = std::all_of(operands[i].groups.begin(), operands[i].groups.end(),
                                  [](const auto &p) { return is_activation(p.first); });
    if (activation || site.kind == SiteKind::Indexing || site.kind == SiteKind::IndexPut)
      anchor = i;
  }
  // State allocated elsewhere read through an index this layer made (`self.key_states[:, :,
  // indices]`): the state moves to the index, as the engineers write it
  // (`self.key_states.to(key_states.device)`), so what is read sits with the layer's activations.
  auto held_state = [](const auto &p) { return p.first->kind == OriginKind::HeldState; };
  if (site.kind == SiteKind::Indexing && anchor < site.operands.size() &&
      !operands[anchor].groups.empty() &&
      std::all_of(operands[anchor].groups.begin(), operands[anchor].groups.end(), held_state))
    for (size_t i = 0; i < site.operands.size(); ++i)
      if (i != anchor && site.operands[i].role == OperandRole::Index &&
          !operands[i].groups.empty() &&
          std::all_of(operands[i].groups.begin(), operands[i].groups.end(),
                      [](const auto &p) { return is_activation(p.first); })) {
        anchor = i;
        break;
      }
  // A table left on the CPU (`torch.gather(cpu_table, 1, position_ids)`) is moved to the
  // activations, not the activations to the CPU: the result meets them next.
  auto on_cpu = [](const auto &p) { return p.second.kind == DeviceGroup::Kind::Cpu; };
  if (anchor < site.operands.size() && !site.operands[anchor].keeps_device() &&
      std::all_of(operands[anchor].groups.begin(), operands[anchor].groups.end(), on_cpu))
    for (size_t i = 0; i < site.operands.size(); ++i)
      if (i != anchor && !operands[i].groups.empty() &&
          site.operands[i].role != OperandRole::Target &&
          std::all_of(operands[i].groups.begin(), operands[i].groups.end(),
                      [](const auto &p) { return is_activation(p.first); })) {
        anchor = i;
        break;
      }
  // A layer's own parameter anchors rather than state allocated elsewhere: the state moves.
  auto held = [](const auto &p) { return p.first->kind == OriginKind::HeldState; };
  if (anchor == site.operands.size())
    for (size_t i = 0; i < site.operands.size(); ++i)
      if (!operands[i].groups.empty() && site.operands[i].role != OperandRole::Target &&
          std::none_of(operands[i].groups.begin(), operands[i].groups.end(), held)) {
        anchor = i;
        break;
      }
  if (anchor == site.operands.size())
    for (size_t i = 0; i < site.operands.size(); ++i)
      if (!operands[i].groups.empty() && site.operands[i].role != OperandRole::Target) {
        anchor = i;
        break;
      }
  return anchor;
}

// An operand joined from paths and made from the anchor itself on some of them (`mask = emb ==
// k` where `input_ids is None`, `mask = ids == k` elsewhere) holds all the anchor's origins, so
// every one of its own shares a device with some origin of the anchor. Where its paths made from
// the anchor cover every path of the anchor, the branch that chose is not the anchor's: on each
// other path the operand is only that path's tensors while the anchor may still be any of its
// own, and a path of the anchor made by a submodule on a device that path never has is a
// mismatch.
template <typename SameDevice>
bool joined_apart_from_anchor(const Site &site, const std::vector<Grouped> &operands, size_t anchor,
                              size_t i, const SameDevice &same_device, Mismatch &out) {
  const auto &paths = site.operands[i].paths;
  const auto &anchor_groups = operands[anchor].groups;
  if (!paths || anchor_groups.empty())
    return false;
  auto in_set = [](const OriginSet &set, const Origin *o) {
    return std::any_of(set.begin(), set.end(), [o](const Origin *p) { return same_origin(o, p); });
  };
  const OriginSet &anchor_origins = site.operands[anchor].origins;
  auto from_anchor = [&](const OriginSet &path) {
    return std::all_of(path.begin(), path.end(),
                       [&](const Origin *o) { return in_set(anchor_origins, o); });
  };
  OriginSet covered;
  for (const OriginSet &path : *paths)
    if (from_anchor(path))
      covered.insert(covered.end(), path.begin(), path.end());
  if (!std::all_of(anchor_groups.begin(), anchor_groups.end(),
                   [&](const auto &a) { return in_set(covered, a.first); }))
    return false;
  for (const OriginSet &path : *paths) {
    if (from_anchor(path))
      continue;
    std::vector<std::pair<const Origin *, DeviceGroup>> on_path;
    for (const auto &p : operands[i].groups)
      if (in_set(path, p.first))
        on_path.push_back(p);
    if (on_path.empty())
      continue;
    for (const auto &[anchor_origin, anchor_group] : anchor_groups) {
      bool submodule = anchor_origin->kind == OriginKind::Child ||
                       anchor_origin->kind == OriginKind::LayerIteration ||
                       anchor_origin->kind == OriginKind::Input ||
                       anchor_origin->kind == OriginKind::Parameter;
      bool shared =
          std::any_of(on_path.begin(), on_path.end(),
                      [&, &g = anchor_group](const auto &p) { return same_device(p.second, g); });
      if (shared || !submodule)
        continue;
      if (!out.moved_origin) {
        out.moved_origin = on_path.front().first;
        out.anchor_origin = anchor_origin;
      }
      out.moved.push_back(i);
      return true;
    }
  }
  return false;
}

// Whether the operand, joined from several paths, holds `origin` on each of them.
bool on_every_path(const SiteOperand &operand, const Origin *origin) {
  return operand.paths && operand.paths->size() > 1 &&
         std::all_of(operand.paths->begin(), operand.paths->end(), [&](const OriginSet &path) {
           return std::any_of(path.begin(), path.end(),
                              [&](const Origin *o) { return same_origin(o, origin); });
         });
}

// The origin that names operand `i` where it may sit apart from the anchor: of its origins on no
// device of the anchor's, one the operand holds on every path it was joined from (`cat = h`
// where `mems` is None, `torch.cat([mems, h])` elsewhere: `h` is always there, `mems` only on
// one path), else the first.
template <typename SameDevice>
const std::pair<const Origin *, DeviceGroup> &
operand_named(const Site &site, const std::vector<Grouped> &operands, size_t anchor, size_t i,
              bool overlaps, const SameDevice &same_device) {
  const std::pair<const Origin *, DeviceGroup> *first = nullptr;
  const auto &paths = site.operands[i].paths;
  for (const auto &candidate : operands[i].groups) {
    bool shared =
        std::any_of(operands[anchor].groups.begin(), operands[anchor].groups.end(),
                    [&](const auto &p) { return same_device(p.second, candidate.second); });
    if (shared || (overlaps && candidate.first->kind == OriginKind::Fresh &&
                   candidate.first->has(OriginFact::InHelper)))
      continue;
    if (!first)
      first = &candidate;
    if (!paths || paths->size() < 2)
      break;
    if (on_every_path(site.operands[i], candidate.first))
      return candidate;
  }
  return *first;
}

// The operands that may sit on another device than the anchor, and the origins that say so.
void find_moved(const Site &site, const std::vector<Grouped> &operands, size_t anchor,
                Mismatch &out) {
  const bool explicit_placement = placed_explicitly(site);
  const bool device_values_differ = site.file && site.file->explicit_placement;
  auto same_device = [explicit_placement, device_values_differ](const DeviceGroup &a,
                                                                const DeviceGroup &b) {
    return devlint::same_device(a, b, explicit_placement, device_values_differ);
  };
  for (size_t i = 0; i < site.operands.size(); ++i) {
    if (i == anchor)
      continue;
    // A value joined from several paths is checked on every path: one path that agrees with the
    // anchor does not make the others safe (`if x.dim() > 1: x = x.to(logits.device)`). Only a
    // CPU tensor that a helper makes on one of its paths (an empty-input edge case) is left to
    // the helper.
    bool overlaps =
        std::any_of(operands[i].groups.begin(), operands[i].groups.end(), [&](const auto &mine) {
          return std::any_of(
              operands[anchor].groups.begin(), operands[anchor].groups.end(),
              [&](const auto &theirs) { return same_device(theirs.second, mine.second); });
        });
    for (const auto &[origin, group] : operands[i].groups) {
      // `group` named through an init-capture: C++17 cannot capture a structured binding.
      bool shared =
          std::any_of(operands[anchor].groups.begin(), operands[anchor].groups.end(),
                      [&, &group = group](const auto &p) { return same_device(p.second, group); });
      if (!shared && overlaps && origin->kind == OriginKind::Fresh &&
          origin->has(OriginFact::InHelper))
        continue;
      if (!shared) {
        if (!out.moved_origin) {
          const auto &[named, named_group] =
              operand_named(site, operands, anchor, i, overlaps, same_device);
          out.moved_origin = named;
          out.moved_origin_alone =
              std::count_if(
                  operands[i].groups.begin(), operands[i].groups.end(), [&](const auto &mine) {
                    return std::none_of(operands[anchor].groups.begin(),
                                        operands[anchor].groups.end(), [&](const auto &theirs) {
                                          return same_device(theirs.second, mine.second);
                                        });
                  }) == 1;
          // Explain with an anchor origin on another device, an activation when there is one;
          // of those one the anchor holds on every path it was joined from, else, in a value the
          // running loop carries from one pass to the next, what another layer list of the loop
          // made (this pass or the previous one) rather than what the loop started with, which
          // only its first pass sees.
          const SiteOperand &anchor_operand = site.operands[anchor];
          auto in_its_loop = [&site](const Origin *o) {
            return o->kind == OriginKind::LayerIteration && o->loop && o->file == site.file &&
                   o->loop->range.begin <= site.expr->range.begin &&
                   site.expr->range.end <= o->loop->range.end;
          };
          const bool carried = std::any_of(
              anchor_operand.origins.begin(), anchor_operand.origins.end(), [&](const Origin *o) {
                return in_its_loop(o) && o->has(OriginFact::EarlierIteration);
              });
          // (Another element of the moved operand's own list is apart from it only where the map
          // cuts that list: the loop's starting value says more.)
          auto other_layers = [&named = named](const Origin *o) {
            return named->kind != OriginKind::LayerIteration || named->label != o->label;
          };
          auto rank = [&](const Origin *o) {
            return (is_activation(o) ? 4 : 0) + (on_every_path(anchor_operand, o) ? 2 : 0) +
                   (carried && in_its_loop(o) && other_layers(o) ? 1 : 0);
          };
          const Origin *witness = nullptr;
          for (const auto &[anchor_origin, anchor_group] : operands[anchor].groups)
            if (!same_device(anchor_group, named_group) &&
                (!witness || rank(anchor_origin) > rank(witness)))
              witness = anchor_origin;
          out.anchor_origin = witness ? witness : operands[anchor].groups.front().first;
        }
        out.moved.push_back(i);
        break;
      }
    }
    if (!out.moved.empty() && out.moved.back() == i)
      continue;
    if (joined_apart_from_anchor(site, operands, anchor, i, same_device, out))
      continue;
    // The anchor may be the joined one: `if emb is None: emb = self.embed(ids)` next to `ids`.
    // A path of the anchor made by a submodule on a device the operand never has is a mismatch.
    for (const auto &[anchor_origin, anchor_group] : operands[anchor].groups) {
      bool shared =
          std::any_of(operands[i].groups.begin(), operands[i].groups.end(),
                      [&, &g = anchor_group](const auto &p) { return same_device(p.second, g); });
      // (a parameter: a member the method replaces on one path only, read on the other)
      bool submodule = anchor_origin->kind == OriginKind::Child ||
                       anchor_origin->kind == OriginKind::LayerIteration ||
                       anchor_origin->kind == OriginKind::Input ||
                       anchor_origin->kind == OriginKind::Parameter;
      if (shared || !submodule || operands[i].groups.empty())
        continue;
      if (!out.moved_origin) {
        out.moved_origin = operands[i].groups.front().first;
        out.anchor_origin = anchor_origin;
      }
      out.moved.push_back(i);
      break;
    }
  }
}

} // namespace

bool find_mismatch(const Site &site, const PlacementModel &placement, Mismatch &out) {
  std::vector<Grouped> operands = group_operands(site, placement);
  size_t anchor = choose_anchor(site, operands);
  if (anchor == site.operands.size())
    return false;
  out.anchor = anchor;
  out.anchor_origin = operands[anchor].groups.front().first;
  find_moved(site, operands, anchor, out);
  return !out.moved.empty();
}

} // namespace devlint
