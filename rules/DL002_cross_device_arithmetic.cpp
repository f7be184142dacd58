#include "rules/site_finding.h"

namespace devlint {
namespace {

class CrossDeviceArithmetic final : public SiteRule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo rule{"DL002", "cross-device-arithmetic",
                               "arithmetic, residual add or matmul between tensors that may sit "
                               "on different devices",
                               R"(## What it does
Flags binary tensor operations (`+ - * / @ ==`, in-place forms, `torch.add/mul/where/matmul/bmm/
einsum`, `F.linear`, `F.scaled_dot_product_attention`) and calls of compiled kernels that a file
imports from another package (`selective_state_update` from mamba-ssm, `flash_attn_func`,
torchvision's `batched_nms`) whose operands may be on different devices under a multi-GPU device
map. transformers' own helpers (`_prepare_4d_causal_attention_mask`, imported relatively) only
read a tensor's shape and dtype and are not kernels. The classic case is a residual add in a
block that is not in `_no_split_modules`: the block's input and its MLP's output sit on different
GPUs.

## Why is this bad?
Only calls through `module(...)` are moved by accelerate's hooks. Inside a class that accelerate may
split, `input + self.mlp(input)` mixes the device of the caller with the device of `mlp`.

## Example
```python
class TransformerLayer(nn.Module):  # not in _no_split_modules
    def forward(self, hidden_states):
        mlp_output = self.post_attention_layernorm(self.mlp(hidden_states))
        return hidden_states + mlp_output
```

## Example (C++)
```cpp
encoder->to(device);     // a device chosen at run time
decoder->to(try_gpu(1)); // another one
auto sum = encoder->forward(x.to(device)) + decoder->forward(y.to(try_gpu(1)));
```

## Fix
Move the later operand to the first operand's device (`mlp_output.to(hidden_states.device)`), or
add the class to `_no_split_modules` so it always sits on one device. State that a kernel may
update in place (a cache's `ssm_states[layer_idx]`) gets no automatic fix: a moved copy would be
updated instead of the cache, so the cache has to be allocated on each layer's device.
)",
                               FixStrategy::MoveToAnchor};
    return rule;
  }
  std::vector<SiteKind> site_kinds() const override {
    return {SiteKind::Arithmetic, SiteKind::Matmul};
  }
  Finding report(const SiteContext &context) const override {
    return combines_finding(*this, context, kMayDiffer);
  }
};

} // namespace

const Rule &cross_device_arithmetic_rule() {
  static const CrossDeviceArithmetic rule;
  return rule;
}

} // namespace devlint
