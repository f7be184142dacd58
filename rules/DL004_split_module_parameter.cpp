#include "rules/site_finding.h"

namespace devlint {
namespace {

bool is_state(const Origin *o) {
  return o && (o->kind == OriginKind::Parameter || o->kind == OriginKind::PlainTensor);
}

class SplitModuleParameter final : public SiteRule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo rule{"DL004", "split-module-parameter",
                               "a parameter, buffer or plain tensor attribute combined with "
                               "activations from another device",
                               R"(## What it does
Flags sites where a module's own `nn.Parameter` or buffer (when the module may be split, each of
its direct parameters is its own device-map entry), or a plain tensor attribute that is not a
registered buffer (`self.inv_freq = ...` in `__init__`), meets activations from another origin.

## Why is this bad?
Dispatch never moves a plain tensor attribute: it stays on the CPU. And a split module's own
parameters (`self.boi`, `self.eoi`, `self.image_newline`) are placed independently of its
children, so `torch.cat((self.boi, x, self.eoi))` can mix two GPUs.

## Example
```python
x = self.linear_proj(x)
boi = self.boi.expand(x.shape[0], -1, -1)
eoi = self.eoi.expand(x.shape[0], -1, -1)
x = torch.cat((boi, x, eoi), dim=1)
```

## Example (C++)
A tensor member that is not registered stays on the CPU when the module is moved (`->to()` moves
parameters and buffers only; `register_parameter("w", w_)` as a statement registers `w_`):
```cpp
struct BiasImpl : torch::nn::Module {
  BiasImpl() { offsets_ = torch::zeros({8}); }  // never registered
  torch::Tensor forward(torch::Tensor x) { return x + offsets_; }
  torch::Tensor offsets_;
};
```

## Fix
Move the parameter to the activation's device: `boi.to(x.device)`; register plain tensors with
`self.register_buffer(...)`.
)",
                               FixStrategy::MoveToAnchor};
    return rule;
  }
  std::vector<SiteKind> site_kinds() const override { return combining_site_kinds(); }
  bool claims(const SiteContext &context) const override {
    const Mismatch &m = context.mismatch;
    return is_state(m.moved_origin) || is_state(m.anchor_origin);
  }
  Finding report(const SiteContext &context) const override {
    return combines_finding(*this, context, kMayDiffer);
  }
};

} // namespace

const Rule &split_module_parameter_rule() {
  static const SplitModuleParameter rule;
  return rule;
}

} // namespace devlint
