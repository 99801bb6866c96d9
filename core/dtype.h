// Element types. float32 and float64 compute; float16/bfloat16 are storage types (core/half.h):
// kernels load them to float32, compute, and store the result rounded. int32 holds token ids and
// targets.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/half.h"

namespace normlab {

enum class DType : uint8_t { F32, F64, F16, BF16, I32 };

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::F64: return 8;
    case DType::F16: return 2;
    case DType::BF16: return 2;
    case DType::I32: return 4;
  }
  return 0;
}

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "float32";
    case DType::F64: return "float64";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::I32: return "int32";
  }
  return "?";
}

constexpr bool is_floating(DType t) { return t != DType::I32; }
// The 16-bit floating types: storage only, computed in float32.
constexpr bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::F32; }
template <> constexpr DType dtype_of<double>() { return DType::F64; }
template <> constexpr DType dtype_of<int32_t>() { return DType::I32; }
template <> constexpr DType dtype_of<bfloat16>() { return DType::BF16; }
template <> constexpr DType dtype_of<float16>() { return DType::F16; }

}  // namespace normlab
