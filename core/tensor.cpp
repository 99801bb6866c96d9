#include "core/tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <type_traits>

#include "core/backend.h"
#include "core/bytes.h"
#include "core/random.h"

namespace normlab {

Storage::Storage(size_t nbytes, Device dev) : bytes(nbytes), device(dev) {
  data = backend_for(dev).allocate(nbytes);
}
Storage::Storage(void* external, size_t nbytes, std::shared_ptr<void> external_owner)
    : data(external), bytes(nbytes), device(Device::cpu()), owner(std::move(external_owner)) {}
Storage::~Storage() {
  if (!owner) backend_for(device).deallocate(data, bytes);
}

Device parse_device(const std::string& text) {
  if (text == "cpu") return Device::cpu();
  if (text == "cuda") return Device::cuda(0);
  const std::string index = text.rfind("cuda:", 0) == 0 ? text.substr(5) : "";
  if (!index.empty() && index.size() <= 4 && index.find_first_not_of("0123456789") == std::string::npos)
    return Device::cuda(std::stoi(index));
  fail("device", "unknown device '{}' (expected cpu, cuda or cuda:N)", text);
}

namespace {

// Bytes of a contiguous dtype tensor of `shape`; throws when that does not fit int64.
size_t bytes_of(const Shape& shape, DType dtype) {
  const int64_t n = numel_of(shape, "tensor");
  const auto element = static_cast<int64_t>(dtype_size(dtype));
  NL_CHECK(n <= std::numeric_limits<int64_t>::max() / element, "tensor",
           "{} {} needs more than 2^63 - 1 bytes", dtype_name(dtype), shape_str(shape));
  return static_cast<size_t>(n * element);
}

// Zero-size tensors still get a (tiny) storage so that defined() is true. A backend out of memory
// is an error naming the tensor.
std::shared_ptr<Storage> allocate_storage(size_t bytes, const Shape& shape, DType dtype, Device device) {
  try {
    return std::make_shared<Storage>(std::max<size_t>(bytes, 1), device);
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(fmt::format("[tensor] out of memory allocating {} {} on {} ({}): {}", dtype_name(dtype),
                                  shape_str(shape), device.str(), format_bytes(static_cast<double>(bytes)),
                                  e.what()));
  }
}

}  // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  const size_t bytes = bytes_of(shape, dtype);
  Tensor t;
  t.shape_ = shape;
  t.strides_ = contiguous_strides(shape);
  t.dtype_ = dtype;
  t.storage_ = allocate_storage(bytes, shape, dtype, device);
  return t;
}

Tensor Tensor::from_external(void* data, const Shape& shape, DType dtype, std::shared_ptr<void> owner) {
  NL_CHECK(owner != nullptr, "from_external", "needs an owner that keeps the memory alive");
  NL_CHECK(data != nullptr || numel_of(shape, "from_external") == 0, "from_external",
           "null data for {} {}", dtype_name(dtype), shape_str(shape));
  Tensor t;
  t.shape_ = shape;
  t.strides_ = contiguous_strides(shape);
  t.dtype_ = dtype;
  t.storage_ = std::make_shared<Storage>(data, bytes_of(shape, dtype), std::move(owner));
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  return full(shape, 0.0, dtype, device);
}

Tensor Tensor::full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  backend_for(device).fill(t, value);
  return t;
}

namespace {

// A new host tensor whose elements, in row-major order, are value(0), value(1), ... (doubles
// converted to dtype), written in place: no host-side copy of the whole tensor.
template <typename F> Tensor generate(const Shape& shape, DType dtype, const char* op, F value) {
  Tensor t = Tensor::empty(shape, dtype);
  const int64_t n = t.numel();
  auto write = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    for (int64_t i = 0; i < n; ++i) p[i] = convert_element<T>(value(i));
  };
  switch (dtype) {
    case DType::F32: write(t.data<float>()); break;
    case DType::F64: write(t.data<double>()); break;
    case DType::I32: write(t.data<int32_t>()); break;
    case DType::BF16: write(t.data<bfloat16>()); break;
    case DType::F16: write(t.data<float16>()); break;
    default: fail(op, "does not support {}", dtype_name(dtype));
  }
  return t;
}

}  // namespace

Tensor Tensor::from_vector(const std::vector<double>& values, const Shape& shape, DType dtype) {
  NL_CHECK(static_cast<int64_t>(values.size()) == numel_of(shape, "tensor"), "tensor",
           "from_vector got {} values for shape {}", values.size(), shape_str(shape));
  return generate(shape, dtype, "from_vector", [&](int64_t i) { return values[static_cast<size_t>(i)]; });
}

Tensor Tensor::from_ints(const std::vector<int32_t>& values, const Shape& shape) {
  NL_CHECK(static_cast<int64_t>(values.size()) == numel_of(shape, "tensor"), "tensor",
           "from_ints got {} values for shape {}", values.size(), shape_str(shape));
  Tensor t = empty(shape, DType::I32);
  std::copy(values.begin(), values.end(), t.data<int32_t>());
  return t;
}

Tensor Tensor::randn(const Shape& shape, Generator& gen, double mean, double std, DType dtype) {
  return generate(shape, dtype, "randn", [&](int64_t) { return mean + std * gen.normal(); });
}

Tensor Tensor::uniform(const Shape& shape, Generator& gen, double low, double high, DType dtype) {
  return generate(shape, dtype, "uniform", [&](int64_t) { return low + (high - low) * gen.uniform(); });
}

int64_t Tensor::size(int axis) const { return shape_[normalize_axis(axis, dim(), "tensor.size")]; }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] != 1 && strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

std::string Tensor::describe() const {
  if (!defined()) return "undefined tensor";
  return fmt::format("{} {} {}", dtype_name(dtype_), shape_str(shape_), device().str());
}

Tensor Tensor::contiguous() const {
  check_defined(*this, "contiguous");
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  check_defined(*this, "clone");
  Tensor out = empty(shape_, dtype_, device());
  backend_for(device()).copy_strided(*this, out);
  return out;
}

Tensor Tensor::reshape(const Shape& shape) const {
  check_defined(*this, "reshape");
  Shape target = shape, known_dims;
  int infer = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      NL_CHECK(infer < 0, "reshape", "more than one -1 in {}", shape_str(shape));
      infer = static_cast<int>(i);
    } else {
      known_dims.push_back(target[i]);
    }
  }
  const int64_t known = numel_of(known_dims, "reshape");
  if (infer >= 0) {
    NL_CHECK(known > 0 && numel() % known == 0, "reshape", "cannot reshape {} into {}",
             shape_str(shape_), shape_str(shape));
    target[infer] = numel() / known;
  }
  NL_CHECK(numel_of(target, "reshape") == numel(), "reshape", "cannot reshape {} ({} elements) into {}",
           shape_str(shape_), numel(), shape_str(shape));
  Tensor out = contiguous();
  out.shape_ = target;
  out.strides_ = contiguous_strides(target);
  return out;
}

Tensor Tensor::transpose(int a, int b) const {
  check_defined(*this, "transpose");
  int na = normalize_axis(a, dim(), "transpose"), nb = normalize_axis(b, dim(), "transpose");
  Tensor out = *this;
  std::swap(out.shape_[na], out.shape_[nb]);
  std::swap(out.strides_[na], out.strides_[nb]);
  return out;
}

Tensor Tensor::expand(const Shape& shape) const {
  check_defined(*this, "expand");
  const int nd = static_cast<int>(shape.size()), off = nd - dim();
  NL_CHECK(off >= 0, "expand", "cannot expand {} to {}", shape_str(shape_), shape_str(shape));
  numel_of(shape, "expand");  // a view too must have a countable number of elements
  Tensor out = *this;
  out.shape_ = shape;
  out.strides_.assign(shape.size(), 0);
  for (int i = 0; i < dim(); ++i) {
    NL_CHECK(shape_[i] == shape[off + i] || shape_[i] == 1, "expand", "cannot expand {} to {}",
             shape_str(shape_), shape_str(shape));
    out.strides_[off + i] = shape_[i] == 1 ? 0 : strides_[i];
  }
  return out;
}

Tensor Tensor::to(DType dtype) const {
  check_defined(*this, "to");
  if (dtype == dtype_) return *this;
  Tensor out = empty(shape_, dtype, device());
  backend_for(device()).copy_strided(*this, out);
  return out;
}

Tensor Tensor::to(Device dev) const {
  check_defined(*this, "to");
  if (dev == device()) return *this;
  Tensor src = contiguous();
  Tensor out = empty(shape_, dtype_, dev);
  if (dev.kind == DeviceKind::CPU) {
    backend_for(src.device()).copy_to_host(out.raw_data(), src.raw_data(), src.nbytes());
  } else if (src.device().kind == DeviceKind::CPU) {
    backend_for(dev).copy_from_host(out.raw_data(), src.raw_data(), src.nbytes());
  } else {
    return src.to(Device::cpu()).to(dev);
  }
  return out;
}

void Tensor::copy_(const Tensor& src) {
  check_defined(*this, "copy_");
  check_defined(src, "copy_", "src");
  check_same_shape(*this, src, "copy_", "self", "src");
  NL_CHECK(is_contiguous(), "copy_", "destination must be contiguous");
  Tensor s = src.device() == device() ? src : src.to(device());
  backend_for(device()).copy_strided(s, *this);
}

void Tensor::fill_(double value) {
  check_defined(*this, "fill_");
  NL_CHECK(is_contiguous(), "fill_", "tensor must be contiguous");
  backend_for(device()).fill(*this, value);
}

void* Tensor::raw_data() {
  return static_cast<char*>(storage_->data) + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}
const void* Tensor::raw_data() const {
  return static_cast<const char*>(storage_->data) + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

void Tensor::check_access(DType requested) const {
  check_defined(*this, "data");
  NL_CHECK(requested == dtype_, "data", "tensor is {}, accessed as {}", dtype_name(dtype_),
           dtype_name(requested));
}

std::vector<double> Tensor::to_vector() const {
  check_defined(*this, "to_vector");
  Tensor t = to(Device::cpu()).contiguous();
  std::vector<double> out(static_cast<size_t>(t.numel()));
  switch (t.dtype()) {
    case DType::F32: std::copy_n(t.data<float>(), out.size(), out.begin()); break;
    case DType::F64: std::copy_n(t.data<double>(), out.size(), out.begin()); break;
    case DType::I32: std::copy_n(t.data<int32_t>(), out.size(), out.begin()); break;
    case DType::BF16:
      for (size_t i = 0; i < out.size(); ++i) out[i] = bf16_to_float(t.data<bfloat16>()[i]);
      break;
    case DType::F16:
      for (size_t i = 0; i < out.size(); ++i) out[i] = f16_to_float(t.data<float16>()[i]);
      break;
    default: fail("to_vector", "unsupported dtype {}", dtype_name(t.dtype()));
  }
  return out;
}

std::vector<int32_t> Tensor::to_ints() const {
  Tensor t = to(Device::cpu()).contiguous();
  NL_CHECK(t.dtype() == DType::I32, "to_ints", "tensor is {}, not int32", dtype_name(t.dtype()));
  return std::vector<int32_t>(t.data<int32_t>(), t.data<int32_t>() + t.numel());
}

double Tensor::item() const {
  NL_CHECK(numel() == 1, "item", "tensor has {} elements {}, expected 1", numel(), shape_str(shape_));
  return to_vector()[0];
}

void check_same_shape(const Tensor& a, const Tensor& b, const char* op, const char* a_name,
                      const char* b_name) {
  if (a.shape() != b.shape())
    fail(op, "shape mismatch: {} is {} but {} is {}", a_name, shape_str(a.shape()), b_name,
         shape_str(b.shape()));
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype())
    fail(op, "dtype mismatch: {} vs {}", dtype_name(a.dtype()), dtype_name(b.dtype()));
}

void check_floating(const Tensor& t, const char* op, const char* name) {
  check_defined(t, op, name);
  if (!is_floating(t.dtype()))
    fail(op, "{} must be floating (float32, float64, bfloat16, float16), got {}", name,
         dtype_name(t.dtype()));
}

void check_defined(const Tensor& t, const char* op, const char* name) {
  if (!t.defined()) fail(op, "{} is an undefined tensor", name);
}

}  // namespace normlab
