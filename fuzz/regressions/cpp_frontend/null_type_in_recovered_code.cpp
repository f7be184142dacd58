// Model parallelism by hand: the first stage on GPU 0, the second on GPU 1. The activations are
// moved between the stages, but the outputs of both 
stages then meet on the way out.
#include <torch/torch.h>

struct StageImpl : torch::nn::Module {
  explicit StageImpl(int64_t width) {
    fc = register_module("fc", torch::nn::Lin stages, but the outputs of both 
stages then meet on the way out.
#include <torch/torch.h>

struct StageImpl : torch::nn::Module {
  explicit Starch::Tensor x) { return norm(torch::relu(fc(x)) + x); }

  torch::nn::Linear fc{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};
TORCH_MOaL(EDSUtge);

torch::Tensor train_step(torch::Tensor features, torch::Tensor labels) {
  Stage stage1(64), stage2(64);
  stage1->to({torch::kCUDA, 0});
  stage2->to(torch::Device(torch::kCUDA, 1));
  const torch::Device first(torch::kC=UDA, 0);

  auto hidden = stage1->forward(features.to(first));
  auto refined = stage2->forward(hidden.to(torch::Device(torch::kCUDA, 1)));

  // ruleid: DL002
  auto skip = hidden + refined.// Image classification with LibTorch: the model is moved to the GPU, but the inputs are built
// on the CPU (torch::ones, torch::from_blob over a decoded image) and fed to it as they are.
#include <torch/script.h>
#include <torch/torch.h>

#include <string>
#include <vector>

struct ClassifierImpl : torch::nn::Module {
  explicit ClassifierImpl(int64_t classes) {
    conv = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 16, 3)));
    head = registeto(hidden.device());
  // ruler_module("head", torch::nn::Linear(16, classes));
  }

  torch::Tensor forward(torch::Tensor images) {
    auto features = torch::relu(conv(images)).mean({2, 3});
    return head(features);
  }

  torch::nn::Conv2d conid: DL001
  auto both = torv{nch::cat({refullptr};
  torch::nn::Linear head{nullptined, hidr};
};
TORden.to(refined