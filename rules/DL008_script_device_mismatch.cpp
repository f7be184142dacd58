#include "rules/origin_text.h"
#include "rules/site_finding.h"

namespace devlint {
namespace {

// Both placements are literal: the devices are known, not merely possible.
constexpr std::string_view kSitOnDifferentDevices = ", which sit on different devices";

class ScriptDeviceMismatch final : public SiteRule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo rule{"DL008", "script-device-mismatch",
                               "a model a script placed on one device is called with tensors on "
                               "another (the CPU included)",
                               R"(## What it does
In scripts that load a model and call it, flags calls (`model(...)`, `model.generate(...)`,
`model.encode(...)`) where the model was moved to one literal device (`.to("cuda:0")`,
`.cuda()`) and a tensor argument to another (`.to("cuda:1")`), and calls of a model moved to a
device (one chosen at run time included: `device = "cuda" if torch.cuda.is_available() else
"cpu"`, `args.device`) with a tensor made on the CPU and never moved there. A script's functions
see the model its top level placed.

## Why is this bad?
The model's first layer (often an embedding) then receives indices on another GPU:
`Expected all tensors to be on the same device ... index_select`.

## Example
```python
model = AutoModel.from_pretrained(name).to("cuda:0")
input_ids = tokenizer(text, return_tensors="pt").input_ids.to("cuda:1")
outputs = model(input_ids)
```

```python
device = "cuda" if torch.cuda.is_available() else "cpu"
model = models.resnet18().to(device)
batch = torch.randn(8, 3, 224, 224)  # made on the CPU, never moved to `device`
logits = model(batch)                # fails on every machine with a GPU
```
Fixed by `model(batch.to(device))`, naming the device variable in scope.

## Example (C++)
```cpp
torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
model->to(device);
auto x = torch::randn({8, 784});  // made on the CPU, never moved to `device`
auto y = model->forward(x);       // fails on every machine with a GPU
```
Fixed by `model->forward(x.to(device))`, naming the device variable in scope.

## Fix
Put the inputs where the model is: `input_ids.to(model.device)`, or `x.to(device)` with the
variable the model was moved to (the automatic fix, where that variable is in scope).
)",
                               FixStrategy::None};
    return rule;
  }
  std::vector<SiteKind> site_kinds() const override { return {SiteKind::ModelCall}; }
  // The placements are the code's own: no hook moves a model's inputs after `.to(device)`.
  std::string why(const SiteContext &context) const override {
    const Mismatch &m = context.mismatch;
    const bool cpp = context.site.file->explicit_placement;
    // A member module moved on its own by script code, called inside its model: the tensor is
    // where the rest of the model is.
    const bool moved_member = m.anchor_origin->moved_by_caller != nullptr;
    auto where = [cpp, moved_member](const Origin &given) -> std::string {
      const Origin &o = given.moved_by_caller ? *given.moved_by_caller : given;
      if (moved_member && !given.moved_by_caller &&
          (o.kind == OriginKind::Child || o.kind == OriginKind::Input ||
           o.kind == OriginKind::Parameter))
        return "the device of the rest of the model";
      const std::string label = cpp ? cpp_spelling(std::string(o.label)) : std::string(o.label);
      switch (o.kind) {
      case OriginKind::LiteralDevice:
        return "`" + std::string(o.label) + "`";
      case OriginKind::RunTimeDevice:
        return "the device in `" + std::string(o.label) + "`";
      case OriginKind::Fresh:
        return label == "cpu" ? "the CPU (`.cpu()`)"
                              : "the CPU (`" + label + "(...)` without a device)";
      case OriginKind::PlainTensor:
        return "the CPU";
      default:
        return "another device";
      }
    };
    const std::string cause = "the code places the model on " + where(*m.anchor_origin) +
                              " and this tensor on " + where(*m.moved_origin);
    return cause + "; a model moved with " + (cpp ? "`->to()`" : "`.to()`") +
           " has no hooks that move its inputs, so its first layer meets the tensor on another "
           "device";
  }
  Finding report(const SiteContext &context) const override {
    Finding f = combines_finding(*this, context, kSitOnDifferentDevices);
    // Where code is placed explicitly (LibTorch) the model's device is written at the call's
    // model: the inputs can be made or moved there; so in a Python script whose model was moved
    // to a device chosen at run time (`x.to(device)`, naming the variable). Between two literal
    // devices of a Python script it depends on intent.
    if (context.site.file->explicit_placement ||
        context.mismatch.anchor_origin->kind == OriginKind::RunTimeDevice) {
      f.fix.reset();
      f.no_fix_reason.clear();
      attach_model_input_fix(f, context.site, context.mismatch);
    }
    return f;
  }
};

} // namespace

const Rule &script_device_mismatch_rule() {
  static const ScriptDeviceMismatch rule;
  return rule;
}

} // namespace devlint
