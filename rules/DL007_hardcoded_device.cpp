#include "rules/rule.h"

namespace devlint {
namespace {

class HardcodedDeviceRule final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo rule{"DL007", "hardcoded-device",
                               "a literal device (`.cuda()`, `.to(\"cuda:0\")`, `device=\"cuda\"`) "
                               "inside a module's method",
                               R"(## What it does
Flags `.cuda()`, `.to("cuda")`, `.to("cuda:1")`, `torch.device("cuda:0")` used as a device, and
`device="cuda"` inside the methods of an `nn.Module`.

## Why is this bad?
A literal device defeats any device map: under `device_map="auto"` the module may sit on
`cuda:3`, and the tensor made on `cuda:0` meets it there. It also breaks CPU and MPS runs.

## Example
```python
mask = torch.ones(seq_len, seq_len, device="cuda")
```

## Fix
Take the device from a tensor in scope: `device=hidden_states.device`. devlint offers no
automatic fix because the right tensor depends on the intent.
)",
                               FixStrategy::None};
    return rule;
  }
  bool claims_hardcoded_device() const override { return true; }
};

} // namespace

const Rule &hardcoded_device_rule() {
  static const HardcodedDeviceRule rule;
  return rule;
}

} // namespace devlint
