#include "rules/site_finding.h"

namespace devlint {
namespace {

class LossLabelDevice final : public SiteRule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo rule{"DL003", "loss-label-device",
                               "loss between head outputs and labels that may sit on another "
                               "device",
                               R"(## What it does
Flags loss computations (`CrossEntropyLoss()(...)`, `F.cross_entropy`, `nll_loss`, `mse_loss`,
...) whose logits and labels/targets may be on different devices.

## Why is this bad?
The root model's hook moves user inputs such as `labels` to the first GPU, while the head
(`lm_head`, `output_layer`, a classifier) sits on the last one. The loss then raises
`Expected all tensors to be on the same device`.

## Example
```python
lm_logits = self.transformer.output_layer(hidden_states)
shift_logits = lm_logits[..., :-1, :].contiguous()
shift_labels = labels[..., 1:].contiguous()
loss = loss_fct(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
```

## Example (C++)
```cpp
auto logits = model->forward(batch.data.to(device));
auto loss = torch::nll_loss(logits, batch.target.to({torch::kCUDA, 1}));
```

## Fix
Move the labels to the logits, as transformers does:
`shift_labels.view(-1).to(shift_logits.device)` (labels are small).
)",
                               FixStrategy::MoveToAnchor};
    return rule;
  }
  std::vector<SiteKind> site_kinds() const override { return {SiteKind::Loss}; }
  Finding report(const SiteContext &context) const override {
    return combines_finding(*this, context, kMayDiffer);
  }
  std::string why(const SiteContext &context) const override {
    if (context.facts.may_split && context.facts.on_first_chain)
      return "user inputs such as labels are moved to the first GPU, and the head that makes the "
             "logits may sit on another (the last, unless it is tied to the input embeddings)";
    return SiteRule::why(context);
  }
};

} // namespace

const Rule &loss_label_device_rule() {
  static const LossLabelDevice rule;
  return rule;
}

} // namespace devlint
