// A stand-in for LibTorch's <torch/script.h> for fuzz_cpp_frontend (see torch.h beside it).
#pragma once

#include <torch/torch.h>

namespace torch {
namespace jit {
struct IValue {
  IValue(at::Tensor tensor);
  at::Tensor toTensor() const;
};

class Module {
public:
  IValue forward(std::vector<IValue> inputs);
  void to(at::Device device, bool non_blocking = false);
  void eval();
};
namespace script {
using Module = torch::jit::Module;
}
Module load(const std::string &path, c10::Device device = c10::kCPU);
} // namespace jit
} // namespace torch
