// The Python extension module normlab._normlab (nanobind), one file per part of the API:
//   tensor.cpp     normlab.Tensor and the NumPy / DLPack conversions
//   autograd.cpp   normlab.Var, backward, no_grad, the tape
//   ops.cpp        normlab.ops: the differentiable ops of autograd/ops.h
//   gradcheck.cpp  the C++ op registry's gradient checks (normlab gradcheck --op NAME)
//   runs.cpp       load_config and train (the GIL released while it trains)
//   norms.cpp      norms defined in Python: rows of the norm table (normlab.register_norm)
//   placements.cpp placements defined in Python: rows of the placement table (register_placement)
//   python_function.h/.cpp  the Python functions such rows hold, released at interpreter exit
//   module.cpp     the module itself and the error translation
// The package's Python half (normlab/__init__.py, gradcheck, tensor(), Config, train(), Run) is in
// python/normlab/.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>

#include "core/tensor.h"

namespace normlab::python {

namespace nb = nanobind;

// Any array on the host that nanobind can read: a NumPy array (buffer protocol or DLPack) or
// any object with __dlpack__ (PyTorch, JAX, CuPy on the host, ...).
using HostArray = nb::ndarray<nb::device::cpu>;

// A Tensor from an array: a view of its memory (no copy) when it is C-contiguous float32,
// float64, float16, bfloat16 or int32 and `copy` is false; otherwise a contiguous copy. Integer
// and bool arrays of other widths are copied into int32 (each value must fit); other dtypes throw
// TypeError.
Tensor tensor_from_array(const HostArray& array, bool copy);
// A writable NumPy array over t's memory (shape and strides kept; it holds t's storage alive).
// A tensor on a GPU is copied to the host first; bfloat16, which NumPy lacks, becomes float32.
nb::object tensor_to_numpy(const Tensor& t);
DType parse_dtype(const std::string& name);  // "float32", "float64", "float16", "bfloat16", "int32"

void bind_tensor(nb::module_& m);
void bind_autograd(nb::module_& m);
void bind_ops(nb::module_& ops);
void bind_gradcheck(nb::module_& m);
void bind_runs(nb::module_& m);
void bind_norms(nb::module_& m);
void bind_placements(nb::module_& m);

}  // namespace normlab::python
