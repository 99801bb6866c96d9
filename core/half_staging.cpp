// HalfStaging: float32 stand-ins for a kernel call's half tensors (see half_staging.h).
#include "core/half_staging.h"

#include "core/error.h"

namespace normlab {

namespace {

// The half dtype among the call's tensors, checking they do not mix two floating types other than
// float32 statistics; F32 when no tensor is half.
DType call_half_dtype(const char* op, std::initializer_list<const Tensor*> inputs,
                      std::initializer_list<Tensor*> outputs) {
  DType half = DType::F32;
  auto note = [&](const Tensor* t) {
    if (t->defined() && is_half(t->dtype())) {
      NL_CHECK(half == DType::F32 || half == t->dtype(), op, "tensors mix {} and {}",
               dtype_name(half), dtype_name(t->dtype()));
      half = t->dtype();
    }
  };
  for (const Tensor* t : inputs) note(t);
  for (const Tensor* t : outputs) note(t);
  if (half == DType::F32) return half;
  auto check = [&](const Tensor* t) {
    NL_CHECK(!t->defined() || t->dtype() == half || t->dtype() == DType::F32, op,
             "tensors mix {} and {}", dtype_name(half), dtype_name(t->dtype()));
  };
  for (const Tensor* t : inputs) check(t);
  for (const Tensor* t : outputs) check(t);
  return half;
}

}  // namespace

HalfStaging::HalfStaging(Backend& backend, const char* op, std::initializer_list<const Tensor*> inputs,
                         std::initializer_list<Tensor*> outputs)
    : backend_(backend), active_(call_half_dtype(op, inputs, outputs) != DType::F32) {
  temps_.reserve(inputs.size() + outputs.size());
  for (const Tensor* t : inputs) inputs_.push_back(stage(t));
  for (Tensor* t : outputs) {
    outputs_.push_back(const_cast<Tensor*>(stage(t)));
    originals_.push_back(t);
  }
}

// t itself when it is not half (float32 statistics, undefined optional tensors), else a float32
// copy of it.
const Tensor* HalfStaging::stage(const Tensor* t) {
  if (!active_ || !t->defined() || !is_half(t->dtype())) return t;
  Tensor& temp = temps_.emplace_back(Tensor::empty(t->shape(), DType::F32, t->device()));
  backend_.copy_strided(*t, temp);
  return &temp;
}

void HalfStaging::store_outputs() {
  for (size_t i = 0; i < outputs_.size(); ++i)
    if (outputs_[i] != originals_[i]) backend_.copy_strided(*outputs_[i], *originals_[i]);
}

}  // namespace normlab
