// A stand-in for LibTorch's <torch/torch.h> for fuzz_cpp_frontend: the same namespaces, class
// names and signatures the C++ frontend recognizes (at::Tensor, c10::Device, c10::TensorOptions,
// torch::nn::Module, torch::nn::ModuleHolder, TORCH_MODULE, torch::jit::Module), in a few hundred
// lines, so Clang parses a fuzzed file in milliseconds instead of the seconds the real header
// takes. Not a model of LibTorch's behaviour: only enough to type the fixtures in fixtures/cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace c10 {
enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 2 };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kMeta = DeviceType::Meta;
using DeviceIndex = int8_t;

struct Device {
  Device(DeviceType type, DeviceIndex index = -1) : type_(type), index_(index) {}
  Device(const std::string &device_string);
  Device(const char *device_string);
  DeviceType type() const { return type_; }
  DeviceIndex index() const { return index_; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }

private:
  DeviceType type_;
  DeviceIndex index_;
};

enum class ScalarType : int8_t { Float, Half, BFloat16, Long, Int, Bool };
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kBool = ScalarType::Bool;

struct TensorOptions {
  TensorOptions() = default;
  TensorOptions(DeviceType type) : device_(type) {}
  TensorOptions(Device device) : device_(device) {}
  TensorOptions(ScalarType dtype) : dtype_(dtype) {}
  TensorOptions device(Device d) const {
    TensorOptions out = *this;
    out.device_ = d;
    return out;
  }
  TensorOptions dtype(ScalarType t) const {
    TensorOptions out = *this;
    out.dtype_ = t;
    return out;
  }
  TensorOptions requires_grad(bool) const { return *this; }

private:
  Device device_{DeviceType::CPU};
  ScalarType dtype_ = ScalarType::Float;
};

using IntArrayRef = std::vector<int64_t>;
struct Scalar {
  Scalar(double) {}
  Scalar(int64_t) {}
  Scalar(int) {}
};
} // namespace c10

namespace at {
using namespace c10;

class TensorBase {
public:
  Device device() const;
  TensorOptions options() const;
  int64_t size(int64_t dim) const;
  int64_t dim() const;
  bool defined() const;
  ScalarType scalar_type() const;
};

class Tensor : public TensorBase {
public:
  Tensor() = default;
  Tensor to(Device device, bool non_blocking = false) const;
  Tensor to(DeviceType type) const;
  Tensor to(ScalarType dtype) const;
  Tensor to(TensorOptions options) const;
  Tensor to(const Tensor &other) const;
  Tensor cuda() const;
  Tensor cpu() const;
  Tensor contiguous() const;
  Tensor detach() const;
  Tensor clone() const;
  Tensor view(IntArrayRef shape) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor transpose(int64_t a, int64_t b) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor softmax(int64_t dim) const;
  Tensor mean() const;
  Tensor mean(IntArrayRef dims, bool keepdim = false) const;
  Tensor sum() const;
  Tensor sum(IntArrayRef dims, bool keepdim = false) const;
  Tensor matmul(const Tensor &other) const;
  Tensor index_select(int64_t dim, const Tensor &index) const;
  Tensor masked_fill(const Tensor &mask, Scalar value) const;
  Tensor flatten() const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor expand(IntArrayRef sizes) const;
  Tensor expand_as(const Tensor &other) const;
  Tensor gather(int64_t dim, const Tensor &index) const;
  Tensor index(std::vector<Tensor> indices) const;
  Tensor &index_put_(std::vector<Tensor> indices, const Tensor &values);
  Tensor &fill_(Scalar value);
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;
  Tensor add(const Tensor &other) const;
  Tensor mul(const Tensor &other) const;
  Tensor &add_(const Tensor &other);
  Tensor &copy_(const Tensor &other);
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  Tensor operator[](int64_t index) const;
  Tensor operator[](const Tensor &index) const;
  template <typename T> T item() const;
  Tensor operator-() const;
  Tensor &operator+=(const Tensor &other);
  Tensor &operator-=(const Tensor &other);
  Tensor &operator*=(const Tensor &other);
  Tensor &operator/=(const Tensor &other);
};

Tensor operator+(const Tensor &a, const Tensor &b);
Tensor operator-(const Tensor &a, const Tensor &b);
Tensor operator*(const Tensor &a, const Tensor &b);
Tensor operator/(const Tensor &a, const Tensor &b);
Tensor operator+(const Tensor &a, Scalar b);
Tensor operator-(const Tensor &a, Scalar b);
Tensor operator*(const Tensor &a, Scalar b);
Tensor operator/(const Tensor &a, Scalar b);
Tensor operator*(Scalar a, const Tensor &b);
Tensor operator==(const Tensor &a, const Tensor &b);
Tensor operator<(const Tensor &a, const Tensor &b);
Tensor operator==(const Tensor &a, Scalar b);
Tensor operator>(const Tensor &a, Scalar b);
Tensor operator<(const Tensor &a, Scalar b);

using TensorList = std::vector<Tensor>;
Tensor ones(IntArrayRef size, TensorOptions options = {});
Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor empty(IntArrayRef size, TensorOptions options = {});
Tensor randn(IntArrayRef size, TensorOptions options = {});
Tensor rand(IntArrayRef size, TensorOptions options = {});
Tensor eye(int64_t n, TensorOptions options = {});
Tensor full(IntArrayRef size, Scalar value, TensorOptions options = {});
Tensor arange(Scalar end, TensorOptions options = {});
Tensor arange(Scalar start, Scalar end, TensorOptions options = {});
Tensor tensor(std::vector<float> values, TensorOptions options = {});
Tensor from_blob(void *data, IntArrayRef sizes, TensorOptions options = {});
Tensor ones_like(const Tensor &other);
Tensor randn_like(const Tensor &other);
Tensor zeros_like(const Tensor &other);
Tensor cat(TensorList tensors, int64_t dim = 0);
Tensor stack(TensorList tensors, int64_t dim = 0);
Tensor matmul(const Tensor &a, const Tensor &b);
Tensor bmm(const Tensor &a, const Tensor &b);
Tensor einsum(const char *equation, TensorList tensors);
Tensor softmax(const Tensor &a, int64_t dim);
Tensor relu(const Tensor &a);
Tensor tanh(const Tensor &a);
Tensor where(const Tensor &condition, const Tensor &a, const Tensor &b);
Tensor mse_loss(const Tensor &input, const Tensor &target);
Tensor nll_loss(const Tensor &input, const Tensor &target);
Tensor log_softmax(const Tensor &input, int64_t dim);
} // namespace at

namespace torch {
using namespace at;

struct NoGradGuard {
  NoGradGuard();
  ~NoGradGuard();
};

namespace cuda {
bool is_available();
int64_t device_count();
} // namespace cuda

namespace nn {
namespace detail {
template <typename...> using void_t = void;
// Module::as<T>(): T is a holder (Linear) or a module class (LinearImpl).
template <typename T, typename = void> struct Contained {
  using type = T;
};
template <typename T> struct Contained<T, void_t<typename T::ContainedType>> {
  using type = typename T::ContainedType;
};
} // namespace detail

class Module {
public:
  template <typename T> typename detail::Contained<T>::type *as();
  virtual ~Module() = default;
  template <typename Holder> Holder register_module(std::string name, Holder module);
  Tensor &register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  Tensor &register_buffer(std::string name, Tensor tensor);
  virtual void to(Device device, bool non_blocking = false);
  virtual void to(DeviceType type);
  void train(bool on = true);
  void eval();
  std::vector<Tensor> parameters() const;
};

template <typename Contained> class ModuleHolder {
public:
  using ContainedType = Contained;
  ModuleHolder() : impl_(new Contained()) {}
  ModuleHolder(std::nullptr_t) {}
  template <typename Head, typename... Tail>
  explicit ModuleHolder(Head &&head, Tail &&...tail)
      : impl_(new Contained(static_cast<Head &&>(head), static_cast<Tail &&>(tail)...)) {}
  Contained *operator->() const { return impl_.get(); }
  Contained &operator*() const { return *impl_; }
  template <typename... Args> auto operator()(Args &&...args) {
    return impl_->forward(static_cast<Args &&>(args)...);
  }
  template <typename Index> auto operator[](Index index) { return (*impl_)[index]; }
  const std::shared_ptr<Contained> &ptr() const { return impl_; }

private:
  std::shared_ptr<Contained> impl_;
};

#define TORCH_MODULE(Name)                                                                         \
  class Name : public torch::nn::ModuleHolder<Name##Impl> {                                        \
  public:                                                                                          \
    using torch::nn::ModuleHolder<Name##Impl>::ModuleHolder;                                       \
  }

struct LinearImpl : Module {
  LinearImpl(int64_t in, int64_t out);
  Tensor forward(const Tensor &input);
  Tensor weight, bias;
};
TORCH_MODULE(Linear);

struct Conv2dOptions {
  Conv2dOptions(int64_t in, int64_t out, int64_t kernel);
};
struct Conv2dImpl : Module {
  Conv2dImpl(Conv2dOptions options);
  Conv2dImpl(int64_t in, int64_t out, int64_t kernel);
  Tensor forward(const Tensor &input);
  Tensor weight, bias;
};
TORCH_MODULE(Conv2d);

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> shape);
};
struct LayerNormImpl : Module {
  LayerNormImpl(LayerNormOptions options);
  Tensor forward(const Tensor &input);
  Tensor weight, bias;
};
TORCH_MODULE(LayerNorm);

struct EmbeddingImpl : Module {
  EmbeddingImpl(int64_t count, int64_t dim);
  Tensor forward(const Tensor &indices);
  Tensor weight;
};
TORCH_MODULE(Embedding);

struct DropoutImpl : Module {
  explicit DropoutImpl(double p = 0.5);
  Tensor forward(const Tensor &input);
};
TORCH_MODULE(Dropout);

struct SequentialImpl : Module {
  template <typename... Modules> explicit SequentialImpl(Modules &&...modules);
  Tensor forward(const Tensor &input);
};
TORCH_MODULE(Sequential);

struct ModuleListImpl : Module {
  template <typename M> void push_back(M module);
  size_t size() const;
  std::shared_ptr<Module> operator[](size_t index) const;
  const std::shared_ptr<Module> *begin() const;
  const std::shared_ptr<Module> *end() const;
};
TORCH_MODULE(ModuleList);

struct ReLUImpl : Module {
  Tensor forward(const Tensor &input);
};
TORCH_MODULE(ReLU);

struct CrossEntropyLossImpl : Module {
  Tensor forward(const Tensor &input, const Tensor &target);
};
TORCH_MODULE(CrossEntropyLoss);

struct MSELossImpl : Module {
  Tensor forward(const Tensor &input, const Tensor &target);
};
TORCH_MODULE(MSELoss);

namespace functional {
Tensor cross_entropy(const Tensor &input, const Tensor &target);
Tensor mse_loss(const Tensor &input, const Tensor &target);
Tensor nll_loss(const Tensor &input, const Tensor &target);
Tensor one_hot(const Tensor &input, int64_t classes = -1);
Tensor relu(const Tensor &input);
Tensor gelu(const Tensor &input);
Tensor softmax(const Tensor &input, int64_t dim);
} // namespace functional
} // namespace nn
} // namespace torch
