// What a call looks like, as the operation models (placement/operations/) ask it: shared checks
// on arguments, callees and the running class.
#pragma once

#include <algorithm>
#include <string_view>
#include <vector>

#include "model/module_model.h"
#include "model/syntax.h"
#include "placement/abstract_value.h"

namespace devlint {

// Every value an argument list holds, with the expression it came from.
template <typename Arguments, typename Visit>
void for_each_argument(const Expr *call, const Arguments &args, Visit visit) {
  for (size_t i = 0; i < args.positional.size() && i + 1 < call->operands.size(); ++i)
    visit(call->operands[i + 1], args.positional[i]);
  for (size_t k = 0; k < args.keywords.size() && k < call->keywords.size(); ++k)
    visit(call->keywords[k].value, args.keywords[k].second);
}

// Some argument holds a tensor made on the CPU (on one of its paths at least): only then is a
// submodule's forward worth following for it (check_handed_cpu_tensors decides the rest).
template <typename Arguments> bool hands_cpu_tensor(const Arguments &args) {
  auto cpu = [](const Value &v) {
    return v.kind == Value::Kind::Tensor &&
           std::any_of(v.origins.begin(), v.origins.end(), made_on_cpu);
  };
  return std::any_of(args.positional.begin(), args.positional.end(), cpu) ||
         std::any_of(args.keywords.begin(), args.keywords.end(),
                     [&](const auto &kv) { return cpu(kv.second); });
}

// A tensor made on the CPU on every path.
bool made_on_cpu_only(const Value &v);

// `nn.Embedding`, `nn.Linear`, `nn.Conv1d`...: a torch layer with weights.
bool is_torch_layer_with_weights(const ChildDecl *child);

// Reductions that return a 0-dim tensor when given no dimension.
bool is_full_reduction(std::string_view name);

// `x.sum(1)`, `torch.sum(x, dim=1)`: the call names a dimension.
bool has_dim_argument(const Expr *call, size_t first_dim_position);

// A 0-dim tensor made from CPU tensors alone mixes with tensors on any device.
bool all_on_cpu(const Value &v);

// `x.device`, `device`, `self.device`, `target_device`: an argument of `.to()` naming a device.
bool names_device(const Expr *e);

// `[[token_id]] * batch_size`, `[bos] + ids`: a list repeated or joined is still a list.
bool builds_list(const Expr *e);
// `"cuda:" + str(k + 1)`: a CUDA device name put together from a literal prefix.
bool builds_cuda_device_name(const Expr *e);

// `__init__` only ever sets `self.<attr> = None`, and a class of the package sets it on a
// submodule in its own `__init__`: a module the parent model builds with it
// (`self.model.decoder.bbox_embed = self.bbox_embed`, as DETR-style detectors share their heads).
bool left_for_parent(const Package &pkg, const ModuleClass &unit, std::string_view attr);

// `self.<attr>` holds a module the class's constructor was handed.
bool handed_to_constructor(const ModuleClass &unit, std::string_view attr);

// A function the file imports by an absolute import from a package other than torch and
// transformers (mamba_ssm, flash_attn, causal_conv1d, torchvision): compiled code, not a helper
// that only reads a tensor's shape or dtype (`_prepare_4d_causal_attention_mask`).
bool imports_kernel(const SyntaxFile &file, const Expr *callee);

// `get_vision_window_index(grid_thw, ...)` with `from ...vision_utils import
// get_vision_window_index`: a function the file imports from its own source tree (a relative
// import) that the analysis has not read, the directory checked holding only part of that tree.
bool imports_unread_tree_function(const SyntaxFile &file, const Expr *callee);

// `helper(self.feed_forward_chunk, ...)`: one of the running object's methods (not a child)
// handed to a function as its first argument.
const FunctionDef *handed_method(const Expr *call, const ModuleClass *unit);

} // namespace devlint
