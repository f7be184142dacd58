// What made a tensor, relative to the device map (docs/DEVICE_MODEL.md section 3): the placement
// analysis gives every value its origins; a finding keeps its operands' kinds for the placement
// ranking (driver/placement_rank).
#pragma once

#include <cstdint>

namespace devlint {

enum class OriginKind : uint8_t {
  Input, // an argument of the analyzed method
  Child, // output (or a directly read parameter) of a submodule: label = path "model.embed"
  LayerIteration, // output of one iteration's ModuleList element: label = list path "layers"
  Parameter,      // the unit's own nn.Parameter / buffer: label = name
  PlainTensor,    // an unregistered tensor attribute made on the CPU in __init__
  Fresh,          // a tensor constructor without device= (CPU), or .cpu()
  Skip,           // a skip_keys argument (past_key_values): wherever it was created
  LiteralDevice,  // .to("cuda:1"), .cuda(), device="cuda": label = the device
  HeldState,      // a tensor an argument object holds, allocated once by whoever built the object
                  // (a cache's `ssm_states`): label = "cache_params.ssm_states"
  // A device chosen at run time where code places tensors explicitly (LibTorch: `torch::Device
  // device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU)`, a `torch::Device`
  // parameter, a helper returning one device or another): label = how the code in scope spells
  // it (`device`), device_key = which device value it is (docs/CPP_DEVICE_MODEL.md section 1).
  RunTimeDevice,
};

} // namespace devlint
