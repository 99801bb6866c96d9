// normlab.Tensor: a typed, shaped view of host (or device) memory, as core/tensor.h, and its
// conversions to and from NumPy / DLPack. The rule: a C-contiguous host array of a dtype normlab
// computes in (float32, float64, float16, bfloat16, int32) is viewed, not copied, in both
// directions; anything else (non-contiguous strides, other integer widths) is copied once.
#include <Python.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <limits>
#include <vector>

#include "bindings/bindings.h"
#include "core/random.h"

namespace normlab::python {

using namespace nb::literals;
namespace dl = nb::dlpack;

namespace {

// The normlab dtype that an array's dtype is viewed as; false when it must be converted.
bool viewable_dtype(dl::dtype d, DType& out) {
  const auto code = static_cast<dl::dtype_code>(d.code);
  if (d.lanes != 1) return false;
  if (code == dl::dtype_code::Float && d.bits == 32) { out = DType::F32; return true; }
  if (code == dl::dtype_code::Float && d.bits == 64) { out = DType::F64; return true; }
  if (code == dl::dtype_code::Float && d.bits == 16) { out = DType::F16; return true; }
  if (code == dl::dtype_code::Bfloat && d.bits == 16) { out = DType::BF16; return true; }
  if (code == dl::dtype_code::Int && d.bits == 32) { out = DType::I32; return true; }
  return false;
}

bool integer_dtype(dl::dtype d) {
  const auto code = static_cast<dl::dtype_code>(d.code);
  return d.lanes == 1 && (code == dl::dtype_code::Int || code == dl::dtype_code::UInt ||
                          code == dl::dtype_code::Bool);
}

std::string array_dtype_name(dl::dtype d) {
  static const char* codes[] = {"int", "uint", "float", "?", "bfloat", "complex", "bool"};
  const char* code = d.code < 7 ? codes[d.code] : "float8";
  return std::string(code) + std::to_string(d.bits) + (d.lanes != 1 ? "x" + std::to_string(d.lanes) : "");
}

Shape array_shape(const HostArray& a) {
  Shape shape(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) shape[i] = static_cast<int64_t>(a.shape(i));
  return shape;
}

// Row-major with unit innermost stride (axes of size 1 may have any stride), as NumPy's
// C_CONTIGUOUS flag. Strides are in elements.
bool c_contiguous(const HostArray& a) {
  int64_t expected = 1;
  for (size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expected) return false;
    expected *= static_cast<int64_t>(a.shape(i));
  }
  return true;
}

// Visits every element of `a` in row-major order: f(pointer to the element, row-major index).
template <typename F> void for_each_element(const HostArray& a, F f) {
  const size_t nd = a.ndim(), item = (a.dtype().bits + 7) / 8;
  const int64_t n = static_cast<int64_t>(a.size());
  std::vector<int64_t> index(nd, 0);
  const char* base = static_cast<const char*>(a.data());
  int64_t offset = 0;  // in elements
  for (int64_t k = 0; k < n; ++k) {
    f(base + offset * static_cast<int64_t>(item), k);
    for (size_t d = nd; d-- > 0;) {  // the next index, odometer-style
      offset += a.stride(d);
      if (++index[d] < static_cast<int64_t>(a.shape(d))) break;
      offset -= a.stride(d) * static_cast<int64_t>(a.shape(d));
      index[d] = 0;
    }
  }
}

template <typename Int> int32_t checked_int32(const char* p) {
  Int v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::is_same_v<Int, bool>) {
    return v ? 1 : 0;
  } else {
    NL_CHECK(std::in_range<int32_t>(v), "Tensor", "integer value {} does not fit int32 (normlab's index dtype)",
             v);
    return static_cast<int32_t>(v);
  }
}

// An integer or bool array of any width, copied into a new int32 tensor.
Tensor copy_to_int32(const HostArray& a) {
  Tensor out = Tensor::empty(array_shape(a), DType::I32);
  int32_t* dst = out.data<int32_t>();
  const dl::dtype d = a.dtype();
  const auto code = static_cast<dl::dtype_code>(d.code);
  auto run = [&](auto convert) { for_each_element(a, [&](const char* p, int64_t k) { dst[k] = convert(p); }); };
  if (code == dl::dtype_code::Bool) run(checked_int32<bool>);
  else if (code == dl::dtype_code::Int && d.bits == 8) run(checked_int32<int8_t>);
  else if (code == dl::dtype_code::Int && d.bits == 16) run(checked_int32<int16_t>);
  else if (code == dl::dtype_code::Int && d.bits == 32) run(checked_int32<int32_t>);
  else if (code == dl::dtype_code::Int && d.bits == 64) run(checked_int32<int64_t>);
  else if (code == dl::dtype_code::UInt && d.bits == 8) run(checked_int32<uint8_t>);
  else if (code == dl::dtype_code::UInt && d.bits == 16) run(checked_int32<uint16_t>);
  else if (code == dl::dtype_code::UInt && d.bits == 32) run(checked_int32<uint32_t>);
  else if (code == dl::dtype_code::UInt && d.bits == 64) run(checked_int32<uint64_t>);
  else throw nb::type_error(("normlab.Tensor: unsupported integer dtype " + array_dtype_name(d)).c_str());
  return out;
}

// Releases the array (and so the Python object behind it) with the interpreter's lock held; after
// the interpreter has shut down (a tensor left on the thread's tape at exit) it is left alone.
void release_array(HostArray* array) {
  if (!Py_IsInitialized()) return;
  nb::gil_scoped_acquire gil;
  delete array;
}

dl::dtype dlpack_dtype(DType t) {
  switch (t) {
    case DType::F32: return nb::dtype<float>();
    case DType::F64: return nb::dtype<double>();
    case DType::I32: return nb::dtype<int32_t>();
    case DType::F16: return dl::dtype{static_cast<uint8_t>(dl::dtype_code::Float), 16, 1};
    case DType::BF16: return dl::dtype{static_cast<uint8_t>(dl::dtype_code::Bfloat), 16, 1};
  }
  return {};
}

nb::tuple shape_tuple(const Shape& shape) {
  nb::list out;
  for (int64_t d : shape) out.append(d);
  return nb::tuple(out);
}

Shape shape_from(const std::vector<int64_t>& dims) { return Shape(dims.begin(), dims.end()); }

}  // namespace

DType parse_dtype(const std::string& name) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32})
    if (name == dtype_name(t)) return t;
  throw nb::value_error(("unknown dtype '" + name + "' (float32, float64, float16, bfloat16 or int32)").c_str());
}

Tensor tensor_from_array(const HostArray& array, bool copy) {
  DType dtype;
  if (!viewable_dtype(array.dtype(), dtype)) {
    if (integer_dtype(array.dtype())) return copy_to_int32(array);
    throw nb::type_error(("normlab.Tensor: unsupported dtype " + array_dtype_name(array.dtype()) +
                          " (float32, float64, float16, bfloat16, or integers, which become int32)")
                             .c_str());
  }
  const Shape shape = array_shape(array);
  if (!copy && c_contiguous(array)) {
    // A view: the storage keeps the array (and the Python object that owns its memory) alive.
    std::shared_ptr<void> owner(new HostArray(array), [](void* p) { release_array(static_cast<HostArray*>(p)); });
    return Tensor::from_external(const_cast<void*>(array.data()), shape, dtype, std::move(owner));
  }
  Tensor out = Tensor::empty(shape, dtype);
  char* dst = static_cast<char*>(out.raw_data());
  const size_t item = dtype_size(dtype);
  for_each_element(array, [&](const char* p, int64_t k) { std::memcpy(dst + k * static_cast<int64_t>(item), p, item); });
  return out;
}

nb::object tensor_to_numpy(const Tensor& tensor) {
  check_defined(tensor, "numpy", "tensor");
  Tensor t = tensor.device() == Device::cpu() ? tensor : tensor.to(Device::cpu());
  if (t.dtype() == DType::BF16) t = t.to(DType::F32);
  auto* keep = new Tensor(t);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  nb::ndarray<nb::numpy> view(keep->raw_data(), shape.size(), shape.data(), owner, strides.data(),
                              dlpack_dtype(t.dtype()), nb::device::cpu::value);
  return nb::cast(view, nb::rv_policy::reference);
}

void bind_tensor(nb::module_& m) {
  nb::class_<Tensor>(m, "Tensor",
                     "A typed, shaped view of memory on one device (core/tensor.h).\n\n"
                     "Tensor(array, copy=False) takes a NumPy array or any DLPack host array. A "
                     "C-contiguous float32, float64, float16, bfloat16 or int32 array is viewed without a "
                     "copy (writes through either are seen by both; the tensor keeps the array alive); "
                     "non-contiguous arrays, and integer/bool arrays of other widths (which become "
                     "int32), are copied. copy=True always copies.")
      .def(
          "__init__", [](Tensor* self, const HostArray& array) { new (self) Tensor(tensor_from_array(array, false)); },
          "array"_a, nb::is_implicit(),
          "A tensor over a host array: a view when C-contiguous and of a normlab dtype, else a copy.")
      .def(
          "__init__", [](Tensor* self, const HostArray& array, bool copy) { new (self) Tensor(tensor_from_array(array, copy)); },
          "array"_a, "copy"_a, "As Tensor(array), but always a copy when copy is True.")
      .def_static(
          "zeros", [](const std::vector<int64_t>& shape, const std::string& dtype) { return Tensor::zeros(shape_from(shape), parse_dtype(dtype)); },
          "shape"_a, "dtype"_a = "float32", "A host tensor of zeros.")
      .def_static(
          "full", [](const std::vector<int64_t>& shape, double value, const std::string& dtype) { return Tensor::full(shape_from(shape), value, parse_dtype(dtype)); },
          "shape"_a, "value"_a, "dtype"_a = "float32", "A host tensor filled with value.")
      .def_static(
          "randn",
          [](const std::vector<int64_t>& shape, uint64_t seed, const std::string& dtype) {
            Generator gen(seed);
            return Tensor::randn(shape_from(shape), gen, 0.0, 1.0, parse_dtype(dtype));
          },
          "shape"_a, "seed"_a = 0, "dtype"_a = "float32",
          "Standard normal values from normlab's seeded generator: identical on every platform for a seed.")
      .def("numpy", &tensor_to_numpy,
           "A NumPy array over this tensor's memory (no copy for host tensors; shape and strides kept). "
           "GPU tensors are copied to the host; bfloat16, which NumPy lacks, is copied to float32.")
      .def(
          "__array__",
          [](const Tensor& t, nb::handle dtype, nb::handle copy) {
            nb::object a = tensor_to_numpy(t);
            if (!dtype.is_none()) a = a.attr("astype")(dtype, "copy"_a = false);
            if (!copy.is_none() && nb::cast<bool>(copy)) a = a.attr("copy")();
            return a;
          },
          "dtype"_a = nb::none(), "copy"_a = nb::none(), "NumPy's array protocol: numpy.asarray(t) views t.")
      .def(
          "__dlpack__", [](const Tensor& t, nb::kwargs kwargs) { return tensor_to_numpy(t).attr("__dlpack__")(**kwargs); },
          "kwargs"_a, "DLPack export (through the NumPy view): numpy.from_dlpack(t), torch.from_dlpack(t).")
      .def(
          "__dlpack_device__", [](const Tensor& t) { return nb::make_tuple(1, 0); },
          "DLPack's device of the export: (1, 0), the host (GPU tensors are exported from a host copy).")
      .def_prop_ro("shape", [](const Tensor& t) { return shape_tuple(t.shape()); }, "The shape, a tuple of ints.")
      .def_prop_ro("strides", [](const Tensor& t) { return shape_tuple(t.strides()); }, "The strides, in elements.")
      .def_prop_ro("dtype", [](const Tensor& t) { return std::string(dtype_name(t.dtype())); },
                   "The element type's name: 'float32', 'float64', 'float16', 'bfloat16' or 'int32'.")
      .def_prop_ro("device", [](const Tensor& t) { return t.device().str(); }, "'cpu' or 'cuda:N'.")
      .def_prop_ro("ndim", &Tensor::dim, "The number of axes.")
      .def_prop_ro("size", &Tensor::numel, "The number of elements.")
      .def("__len__", [](const Tensor& t) {
            if (t.dim() == 0) throw nb::type_error("len() of a 0-d tensor");
            return t.size(0);
          }, "The first axis's size.")
      .def("is_contiguous", &Tensor::is_contiguous, "Whether the elements are row-major without gaps.")
      .def("item", &Tensor::item, "The single element, as a float.")
      .def("tolist", [](const Tensor& t) { return tensor_to_numpy(t).attr("tolist")(); }, "Nested lists of Python numbers.")
      .def("contiguous", &Tensor::contiguous, "Itself when contiguous, else a contiguous copy.")
      .def("clone", &Tensor::clone, "A fresh contiguous copy.")
      .def("reshape", [](const Tensor& t, const std::vector<int64_t>& shape) { return t.reshape(shape_from(shape)); },
           "shape"_a, "A view with a new shape when contiguous (one axis may be -1), else a reshaped copy.")
      .def("transpose", &Tensor::transpose, "a"_a, "b"_a, "A view with axes a and b swapped (no copy).")
      .def("to", [](const Tensor& t, const std::string& dtype) { return t.to(parse_dtype(dtype)); }, "dtype"_a,
           "Converted to dtype (itself when it already has it).")
      .def("to_device", [](const Tensor& t, const std::string& device) { return t.to(parse_device(device)); },
           "device"_a, "Copied to 'cpu', 'cuda' or 'cuda:N' (itself when already there).")
      .def("__repr__", [](const Tensor& t) {
            if (!t.defined()) return std::string("Tensor(undefined)");
            return "Tensor(" + nb::cast<std::string>(nb::repr(tensor_to_numpy(t))) + ", dtype=" +
                   std::string(dtype_name(t.dtype())) + ")";
          });
  nb::implicitly_convertible<HostArray, Tensor>();
}

}  // namespace normlab::python
