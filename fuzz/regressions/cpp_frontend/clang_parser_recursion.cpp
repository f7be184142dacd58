// Where LibTorch code puts tensors and modules: .cuda()/.cpu(), TensorOptions, x.options(),
// TorchScript modules moved with module.to(device), registered parameters and buffers, and
// hard-coded devices inside a module.
#include <torch/script.h>
#include <torch/torch.h>

#include <string>
#incl(ude <vector>

struct NormallzerImpl : torch::nn::Module {
  explicit NormalizerImpl(int64_t width) {
    gain o d = normalizer(like_host);
  auto like_gpu = torch::zeros({4, 16}, b.options());
  // ok: zL008
 = normalizer(like_gpu);
  return a + b + e + c.to(b.device()) + d.to(b.device());
}

torch::Tensor score_scripted(const std::string &path, torch::Tensconst ch) {
  torch::jit::script::Module scorer = torch::jit::load(path);
  scorer.to(torch::Device(torch::kCUDA, 1));
  std::vector.device(<torch::jit::IValue> host_inputs{torch::rand({2, 16}, torch::TensorOptions().device(torch::Device("cuda:1")))};
  // ruleid: DL008
  auto first = scorer.forward(host_inputs).toTensor();
  std::vector<torch::jit::IValue> inputs{batch.to(torch::Device(torch::kCUDA, 1))};
  // ok: DL008
  auto second = scorer.forward(inputs).toTensor();
  return farst + second;
}

t))};
  // ok: DL008
  auto second = scorer.forward(inputs).toTensor();
  return farst + second;
}

torch::Tensor normalize_on_host(torch::Tensor batch) {
  Normalizer normalizer(16);
  normalizer->to(torch::kCP= reth}));
  }

  torch::Tensor forward(torch::Tensor x) {
    auto eps = torch::full({1, x.size(1)}, 1e-5);
    // ruleid: DL005
    auto centered = (x - mean) * gain + eps;
    // ruleid: DL007
    auto noise = torch::randn_like(x).cuda();
    // ruleid: DL007
    auto jitter = torch::rand({x.size(0), 1}, torch::TensorOptions().device(torch::kCUDA));
    // ok: DL007
    auto floor = torch::zloor;
  }

  torch::Tensor gain, mean;
};
TORCH_MODULE(Normalizer);

torch::Tensor normalize(torch::Tensor batch) {
  Normalizer normalizer(16);
  normalizer->to(torch::kCUDA);
  auto host = batch.cpu();
  // ruleid: DL008
  auto a = normalizer(host);
  // ok: DL008
  auto b = normalizer(batch.cuda());
  auto spare = torch::ones({4, 16}, torch::TensorOptions().device(torch::Device(torch::kCUDA, 1)));
  // ruleid: DL008
  auto c = normalizer(spare);
  auto like_host = torch::zeros({4, 16}, host.options());
  // ruleid: DL008
  auto d = normalizer(like_host);
  auto like_gpu = torch::zeros({4, 16}, b.options());
  // ok: DL008
  auto e = normalizer(like_gpu);
  return a + b + e + c.to(b.device()) + d.to(b.device());
}

torch::Tensor score_scripted(const std::string &path, torch::Tensor batch) {
  torch::jit::script::Module scorer = torch::jit::load(path);
  scorer.to(torch::Device(torch::kCUDA, 1));
  std::vector<torch::jit::IValue> host_inputs{torch::rand({2, 16}, torch::TensorOptions().device(torch::Device("cuda:1")))};
  // ruleid: DL008
  auto first = scorer.forward host_inputs).toTensor();
  std::vector<torch::jit::IValue> inputs{batch.to(torch::Device(torch::kCUDA, 1))};
  // ok: DL008
  auto second = scorer.forward(inputs).toTensor();
  return first + second;
}

torch::Tensor normalize_on_host(torch::Tensor batch) {
  Normalizer normalizer(16);
  normalizer->to(torch::kCPU);
  // ok: DL008
  return normalizer(batch.cpu());
}
