// Tensor: a typed, shaped view of reference-counted storage on one device.
// Storage is row-major; reshape of a contiguous tensor and transpose are views (no copy);
// contiguous() copies only when needed. Kernels in backend.h expect contiguous inputs.
#pragma once
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"

namespace normlab {

class Generator;

// A block of device memory, freed by its backend when the last tensor using it goes away; or host
// memory that something else owns (a NumPy array: Tensor::from_external), which is never freed
// here: the storage holds `owner` and releases it instead.
struct Storage {
  void* data = nullptr;
  size_t bytes = 0;
  Device device;
  std::shared_ptr<void> owner;  // set for external memory
  Storage(size_t bytes, Device device);
  Storage(void* external, size_t bytes, std::shared_ptr<void> owner);  // host memory, not freed here
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor (defined() == false)

  // --- factories ---
  static Tensor empty(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor zeros(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor full(const Shape& shape, double value, DType dtype = DType::F32,
                     Device device = Device::cpu());
  static Tensor ones(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu()) {
    return full(shape, 1.0, dtype, device);
  }
  static Tensor scalar(double value, DType dtype = DType::F32) { return full({}, value, dtype); }
  // Copies host values (converted to dtype); values.size() must equal numel(shape).
  static Tensor from_vector(const std::vector<double>& values, const Shape& shape,
                            DType dtype = DType::F32);
  static Tensor from_ints(const std::vector<int32_t>& values, const Shape& shape);
  // A contiguous host tensor over `data`, which something else owns (a NumPy array, the Python
  // bindings): no copy. `owner` keeps the memory alive; the storage holds it until the last tensor
  // using it goes away, and never frees `data` itself. Writes through either side are seen by both.
  static Tensor from_external(void* data, const Shape& shape, DType dtype, std::shared_ptr<void> owner);
  // Seeded random tensors: identical on every run and platform for the same generator state.
  static Tensor randn(const Shape& shape, Generator& gen, double mean = 0.0, double std = 1.0,
                      DType dtype = DType::F32);
  static Tensor uniform(const Shape& shape, Generator& gen, double low = 0.0, double high = 1.0,
                        DType dtype = DType::F32);

  // --- metadata ---
  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int dim() const { return static_cast<int>(shape_.size()); }
  int64_t size(int axis) const;  // negative axes count from the end
  int64_t numel() const { return numel_of(shape_); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device : Device::cpu(); }
  bool is_contiguous() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  // "float32 (2, 3) cpu"
  std::string describe() const;

  // --- views and copies ---
  Tensor contiguous() const;
  Tensor clone() const;                    // always a fresh contiguous copy
  Tensor reshape(const Shape& shape) const;  // one dim may be -1; view when contiguous
  Tensor transpose(int a, int b) const;      // view
  // Broadcast view to `shape` (numpy rules: axes aligned from the right; an axis of size 1, or a
  // missing leading one, repeats with stride 0). Writing through it is not meaningful.
  Tensor expand(const Shape& shape) const;
  Tensor to(DType dtype) const;
  Tensor to(Device device) const;
  // Overwrites this tensor's elements with src's (same shape; dtype converted).
  void copy_(const Tensor& src);
  void fill_(double value);
  void zero_() { fill_(0.0); }

  // --- element access (host tensors) ---
  void* raw_data();
  const void* raw_data() const;
  template <typename T> T* data() { check_access(dtype_of<T>()); return static_cast<T*>(raw_data()); }
  template <typename T> const T* data() const {
    check_access(dtype_of<T>());
    return static_cast<const T*>(raw_data());
  }
  double item() const;                    // the single element, as double
  std::vector<double> to_vector() const;  // all elements in row-major order, as double
  std::vector<int32_t> to_ints() const;
  std::shared_ptr<Storage> storage() const { return storage_; }
  // True when this tensor is the only one using its storage (nothing else can observe a write).
  // Never for external memory (from_external): its owner can observe every write.
  bool owns_storage_alone() const { return storage_ && !storage_->owner && storage_.use_count() == 1; }
  int64_t offset() const { return offset_; }

 private:
  void check_access(DType requested) const;
  std::shared_ptr<Storage> storage_;
  Shape shape_, strides_;
  int64_t offset_ = 0;  // in elements
  DType dtype_ = DType::F32;
};

// Throws "[op] ... must be floating ..." etc. Small checks shared by ops.
void check_same_shape(const Tensor& a, const Tensor& b, const char* op, const char* a_name = "a",
                      const char* b_name = "b");
void check_same_dtype(const Tensor& a, const Tensor& b, const char* op);
void check_floating(const Tensor& t, const char* op, const char* name = "input");
void check_defined(const Tensor& t, const char* op, const char* name = "input");

}  // namespace normlab
