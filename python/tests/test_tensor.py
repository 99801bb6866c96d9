"""normlab.Tensor <-> NumPy: views where the layout allows, copies where it must."""
import numpy as np
import pytest

import normlab


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_from_numpy_views_contiguous_memory(dtype):
    a = np.arange(12, dtype=dtype).reshape(3, 4)
    t = normlab.Tensor(a)
    assert t.shape == (3, 4)
    assert t.dtype == np.dtype(dtype).name
    b = t.numpy()
    assert np.shares_memory(a, b)
    a[1, 2] = 100          # written through NumPy, read through the tensor
    assert t.numpy()[1, 2] == 100
    b[2, 3] = -7           # written through the tensor's view, read through NumPy
    assert a[2, 3] == -7


def test_tensor_keeps_the_array_alive():
    t = normlab.Tensor(np.full((1000,), 3.0))
    import gc
    gc.collect()           # the array has no other reference left: the tensor must hold it
    assert np.all(t.numpy() == 3.0)


def test_numpy_view_keeps_the_tensor_alive():
    b = normlab.Tensor.full([5], 2.5, "float64").numpy()
    import gc
    gc.collect()
    assert b.dtype == np.float64 and np.all(b == 2.5)


def test_transposed_input_is_copied_in_row_major_order():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    at = a.T                                   # (3, 2), strides (1, 3): not C-contiguous
    t = normlab.Tensor(at)
    assert t.shape == (3, 2)
    np.testing.assert_array_equal(t.numpy(), at)
    t.numpy()[0, 1] = 99.0                     # the copy is its own memory
    assert a[1, 0] == 3.0 and not np.shares_memory(t.numpy(), a)


def test_strided_and_reversed_inputs_are_copied():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    for view in (a[:, ::2], a[::-1], a[1:3, 2:5]):
        t = normlab.Tensor(view)
        np.testing.assert_array_equal(t.numpy(), view)
        assert not np.shares_memory(t.numpy(), a)


def test_copy_true_always_copies():
    a = np.ones((2, 2), dtype=np.float32)
    t = normlab.Tensor(a, copy=True)
    a[0, 0] = 5
    assert t.numpy()[0, 0] == 1


def test_integer_arrays_become_int32_and_other_dtypes_are_refused():
    t = normlab.Tensor(np.array([[1, 2], [3, 4]], dtype=np.int64))
    assert t.dtype == "int32" and t.numpy().tolist() == [[1, 2], [3, 4]]
    with pytest.raises(normlab.Error, match="does not fit int32"):
        normlab.Tensor(np.array([2**40], dtype=np.int64))
    with pytest.raises(TypeError, match="complex"):
        normlab.Tensor(np.zeros(3, dtype=np.complex64))


def test_tensor_helper_takes_lists_and_read_only_arrays():
    t = normlab.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert t.dtype == "float64" and t.shape == (2, 2)
    ro = np.arange(3.0)
    ro.flags.writeable = False
    assert normlab.tensor(ro).numpy().tolist() == [0.0, 1.0, 2.0]
    assert normlab.tensor([1, 2], dtype="float32").dtype == "float32"


def test_transposed_tensor_exports_with_its_strides():
    t = normlab.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)).transpose(0, 1)
    assert t.shape == (3, 2) and not t.is_contiguous()
    np.testing.assert_array_equal(t.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3).T)


def test_numpy_protocol_and_dlpack():
    a = np.arange(4, dtype=np.float32)
    t = normlab.Tensor(a)
    assert np.shares_memory(np.asarray(t), a)
    b = np.from_dlpack(t)                      # t.__dlpack__()
    assert np.shares_memory(b, a)
    assert t.__dlpack_device__() == (1, 0)


def test_float16_round_trip():
    a = np.array([1.5, -2.0], dtype=np.float16)
    t = normlab.Tensor(a)
    assert t.dtype == "float16" and np.shares_memory(t.numpy(), a)


def test_type_stubs_are_built_beside_the_module():
    import os
    found = [os.path.join(d, "_normlab") for d in normlab.__path__
             if os.path.exists(os.path.join(d, "_normlab", "__init__.pyi"))]
    assert found, f"no _normlab/__init__.pyi in {normlab.__path__}"
    top = open(os.path.join(found[0], "__init__.pyi")).read()
    ops = open(os.path.join(found[0], "ops.pyi")).read()
    assert "class Tensor" in top and "class Var" in top and "def gradcheck" not in top
    assert "def layer_norm" in ops and "LayerNorm over the last axis" in ops
