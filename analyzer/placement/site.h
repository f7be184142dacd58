// An operation that needs its tensor operands on one device, with what the analysis knows about
// each operand. Rules only see sites (and hard-coded device events), never the syntax tree.
#pragma once

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "diagnostics/finding.h"
#include "model/module_model.h"
#include "placement/origin.h"

namespace devlint {

enum class SiteKind : uint8_t {
  Concat,          // torch.cat / stack / concat / hstack / vstack
  Arithmetic,      // + - * / ==, add/mul/where, residual adds
  Matmul,          // @, matmul, bmm, einsum, F.linear, sdpa
  Loss,            // loss functions and loss modules
  Indexing,        // a[idx], gather, index_select, masked_fill, masked_scatter, F.embedding
  IndexPut,        // a[mask] = b
  ModelCall,       // script code: a model placed on one device called with tensors on another
  HardcodedDevice, // `.cuda()`, `.to("cuda:0")`, `device="cuda"` inside a module's method
};

// Whether a site's operands must share one device (every kind but a literal device, which is
// reported wherever it is written).
inline bool combines_operands(SiteKind kind) { return kind != SiteKind::HardcodedDevice; }

// Every kind whose operands must share one device.
std::vector<SiteKind> combining_site_kinds();

// What an operand is to its operation.
enum class OperandRole : uint8_t {
  Value,  // a tensor the operation combines
  Index,  // an index/mask operand: a CPU index is accepted by PyTorch
  Target, // labels/targets of a loss
  Anchor, // must keep its device: `x` in `x += y`, `a` in `a[i] = b`
  // A torch layer called with the other operands (`self.position_embedding(ids)`): an anchor
  // whose device is its weight's, `<expr>.weight.device`.
  LayerWeights,
};

// Why a fix may not simply move the operand with `.to()`.
enum class MoveLimit : uint8_t {
  None,
  // State a kernel of another package may update in place (`selective_state_update(state,
  // ...)`): a moved copy would leave the holder's tensor unchanged, so no fix moves it.
  UpdatedInPlace,
  // A value made on the CPU on one path and, on another, an argument that may be None or no
  // tensor (`if isinstance(ids, list): ids = torch.LongTensor(ids)`): creating it on the
  // anchor's device is safe, a `.to()` on the value is not.
  UnprovenElsewhere,
};

struct SiteOperand {
  const Expr *expr = nullptr;
  OriginSet origins;
  OperandRole role = OperandRole::Value;
  MoveLimit move_limit = MoveLimit::None;
  // The operand's origins on each path it was joined from (Value::paths), when known.
  std::shared_ptr<const std::vector<OriginSet>> paths = nullptr;
  // The same where the mismatch search does not weigh paths (a binary operation's operands, a
  // concatenated list's elements): only for telling a finding by another path's origin where
  // the model does not build the member of the first (findings/site_checker.cpp).
  std::shared_ptr<const std::vector<OriginSet>> branches = nullptr;
  bool keeps_device() const {
    return role == OperandRole::Anchor || role == OperandRole::LayerWeights;
  }
};

// An expression in a function of the code (of a class, when `unit` is set): where a finding
// points besides the site itself.
struct CodePlace {
  const Expr *expr = nullptr;
  const SyntaxFile *file = nullptr;
  const FunctionDef *function = nullptr;
  const ModuleClass *unit = nullptr;
  bool known() const { return expr && file && function; }
};

struct Site {
  SiteKind kind = SiteKind::Arithmetic;
  const Expr *expr = nullptr;      // the whole operation
  const Stmt *statement = nullptr; // the statement holding it (for fixes that add a line)
  std::string operation;           // "torch.cat", "+", "loss_fct(...)"; HardcodedDevice: the device
  std::vector<SiteOperand> operands;
  const ModuleClass *unit = nullptr; // the class whose method runs (null: free function/script)
  const FunctionDef *function = nullptr;
  const SyntaxFile *file = nullptr;
  // Run by script code (a Python script's top level or functions, LibTorch's `main`): what is
  // placed there, the code placed by hand, and nothing moves a model's inputs.
  bool script = false;
  // A compiled kernel of another package (`batched_nms(boxes[keep], scores[keep], ...)`): an
  // operand computed in the call is moved where it is computed, by the findings there.
  bool external_kernel = false;
  // Members of `self` read on every path of the running method before this site (the running
  // frame's list: valid while the sink looks at the site).
  const std::vector<std::string_view> *members_read = nullptr;
  // Subscripts of the running analysis that, as last evaluated, index a tensor with a tensor
  // (`image[image_mask]`): a tuple or list takes no tensor index, so what they read sits on the
  // device of the tensor indexed (valid while the sink looks at the site).
  const std::unordered_set<const Expr *> *tensor_subscripts = nullptr;
  // Inside a free function: the call that handed it the operands, in the code that called it.
  CodePlace entry_call;
  // A tensor handed to a submodule that nothing moves (made on the CPU, or handed to a block
  // after `parallelize()`): where the submodule's code first uses it with the model's tensors.
  CodePlace handed_use;
  // A block called after transformers' `parallelize()`: no hook moves its arguments.
  bool hand_parallel = false;
  // The site runs only where the unit's constructor built none of its weighted children: there
  // it holds only its own weights, a leaf kept whole
  // (Interpreter::branch_excludes_weighted_children).
  bool unit_whole = false;
  // In a method of a diffusers pipeline: its operands sit where the pipeline's map dealt the
  // components that made them (operations/pipelines.cpp).
  bool pipeline = false; // Run in the first of the two passes over a loop: a variable the loop
                         // carries holds only what
  // it held before the loop, not yet what the previous iteration left. The same site in a later
  // pass sees both, and its report replaces this one.
  bool first_pass = false;
  // Tests of the unit's settings (`self.X`, `self.config.Y`) on the path that reached the site,
  // in the unit's methods and the helpers they inlined (Interpreter::run_conditions).
  std::vector<RunCondition> run_conditions;
};

// What a class's forward hands the forward of its submodule `child` for `parameter`
// (`self.reading_order(labels=ids)`, `layer(h)` over `self.layers`): where no hook moves it, the
// callee receives it where these origins put it. No origins: the analysis cannot tell.
struct ModuleArgument {
  const ModuleClass *caller = nullptr;
  std::string_view child; // as the caller names it: "reading_order", a list "layers"
  std::string_view parameter;
  OriginSet origins;
};

class SiteSink {
public:
  virtual ~SiteSink() = default;
  // Returns the index of the anchor operand when the site is reported (its result then counts
  // as sitting with the anchor, as it will once fixed: no cascade of findings), else -1.
  virtual int on_site(const Site &site) = 0;
  virtual void on_module_argument(const ModuleArgument &) {}
};

} // namespace devlint
