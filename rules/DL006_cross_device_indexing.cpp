#include "rules/site_finding.h"

namespace devlint {
namespace {

class CrossDeviceIndexing final : public SiteRule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo rule{"DL006", "cross-device-indexing",
                               "indexing, gather, masked_scatter or embedding with indices, masks "
                               "or values from another device",
                               R"(## What it does
Flags `a[idx]`, `a[mask] = b`, `gather`, `index_select`, `scatter`, `masked_fill`,
`masked_scatter` and `F.embedding` where the indexed tensor and the index, mask or stored values
may sit on different GPUs, e.g. vision features written into text embeddings produced by a
sibling module on another device.

## Why is this bad?
PyTorch accepts CPU indices, but an index, mask or source on another GPU raises
`Expected all tensors to be on the same device` (or `indices should be either on cpu or on the
same device as the indexed tensor`).

## Example
```python
inputs_embeds = self.embed_tokens(input_ids)
image_features = self.vision_tower(pixel_values)
inputs_embeds[image_mask] = image_features
```

## Example (C++)
```cpp
auto table = embeddings->forward(ids);                   // on the module's device
auto picked = table.index_select(0, indices.to({torch::kCUDA, 1}));
```

## Fix
Move the values and indices to the indexed tensor's device:
`inputs_embeds[image_mask] = image_features.to(inputs_embeds.device)`.
)",
                               FixStrategy::MoveToAnchor};
    return rule;
  }
  std::vector<SiteKind> site_kinds() const override {
    return {SiteKind::Indexing, SiteKind::IndexPut};
  }
  Finding report(const SiteContext &context) const override {
    return combines_finding(*this, context, kMayDiffer);
  }
};

} // namespace

const Rule &cross_device_indexing_rule() {
  static const CrossDeviceIndexing rule;
  return rule;
}

} // namespace devlint
