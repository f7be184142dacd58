#include "rules/site_finding.h"

namespace devlint {
namespace {

bool is_fresh(const Origin *o) { return o && o->kind == OriginKind::Fresh; }

class FreshTensorDevice final : public SiteRule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo rule{"DL005", "fresh-tensor-device",
                               "a tensor created without device= meets tensors on a GPU",
                               R"(## What it does
Flags `torch.zeros/ones/arange/tensor/full/empty/rand*/eye/linspace(...)` results created without
`device=` (so on the CPU), or moved there with `.cpu()`, that meet model tensors in an operation
that needs one device. A 0-dim tensor (`torch.tensor(2.0)`) is not flagged: PyTorch mixes it with
any device.

Also flags such a tensor handed to a submodule of the package (`self.vocoder(ids, lang_id=lang)`)
whose `forward` uses it with the model's tensors or feeds it to a layer with weights without
moving it: on one GPU no hook moves a submodule's arguments. The finding names the line where the
submodule uses it. A submodule that moves what it is given (`mask.to(scores.device)`) is fine.

## Why is this bad?
The default device is the CPU: the operation fails as soon as the model runs on a GPU.

## Example
```python
position_ids = torch.arange(seq_length)
hidden_states = hidden_states + self.position_table[position_ids] * position_ids[:, None]
```

## Example (C++)
```cpp
torch::Tensor forward(torch::Tensor scores) {
  auto mask = torch::ones({scores.size(-1)});  // on the CPU
  return scores + mask;
}
```

## Fix
Create the tensor where it is used: `torch.arange(seq_length, device=hidden_states.device)`.
)",
                               FixStrategy::CreateOnAnchor};
    return rule;
  }
  std::vector<SiteKind> site_kinds() const override { return combining_site_kinds(); }
  bool claims(const SiteContext &context) const override {
    const Mismatch &m = context.mismatch;
    return is_fresh(m.moved_origin) || is_fresh(m.anchor_origin);
  }
  Finding report(const SiteContext &context) const override {
    return combines_finding(*this, context, kMayDiffer);
  }
};

} // namespace

const Rule &fresh_tensor_device_rule() {
  static const FreshTensorDevice rule;
  return rule;
}

} // namespace devlint
