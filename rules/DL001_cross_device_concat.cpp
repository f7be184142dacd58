#include "rules/site_finding.h"

namespace devlint {
namespace {

class CrossDeviceConcat final : public SiteRule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo rule{"DL001", "cross-device-concat",
                               "torch.cat/stack of tensors that may sit on different devices",
                               R"(## What it does
Flags `torch.cat`, `torch.stack`, `torch.concat`, `hstack`, `vstack` calls whose tensors have
different origins under a multi-GPU device map: outputs of different submodules, a value
accumulated over the loop over `self.layers` next to this iteration's output, or an argument next
to a submodule's output in a module that accelerate may split.

## Why is this bad?
With `device_map="auto"`, accelerate cuts a model between blocks. A class that is not in
`_no_split_modules` gets no hook, so its `forward` runs with tensors wherever they were made:
`torch.cat` then raises `Expected all tensors to be on the same device`.

## Example
```python
for index in range(self.num_layers):
    hidden_states, kv_cache = self.layers[index](hidden_states, ...)
    presents = torch.cat((presents, kv_cache), dim=0)  # earlier layers vs this layer
```

## Example (C++)
```cpp
stage1->to({torch::kCUDA, 0});
stage2->to({torch::kCUDA, 1});
auto both = torch::cat({stage1->forward(x), stage2->forward(y)}, 1);
```

## Fix
Move the later operands to the first operand's device:
```python
    presents = torch.cat((presents, kv_cache.to(presents.device)), dim=0)
```
)",
                               FixStrategy::MoveToAnchor};
    return rule;
  }
  std::vector<SiteKind> site_kinds() const override { return {SiteKind::Concat}; }
  Finding report(const SiteContext &context) const override {
    return combines_finding(*this, context, kMayDiffer);
  }
};

} // namespace

const Rule &cross_device_concat_rule() {
  static const CrossDeviceConcat rule;
  return rule;
}

} // namespace devlint
