#include <torch/torch.h>

// A holder of itself: not LibTorch's pattern, but valid C++ that Clang types.
class Loop : public torch::nn::ModuleHolder<Loop> {
public:
  using torch::nn::ModuleHolder<Loop>::ModuleHolder;
  torch::Tensor forward(torch::Tensor x) { return x; }
};

torch::Tensor run(torch::Tensor x) {
  Loop loop;
  return loop(x);
}
