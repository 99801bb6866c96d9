"""normlab.tensor(data, dtype=None): a Tensor from anything numpy.asarray accepts."""
import numpy as np

from ._normlab import Tensor


def tensor(data, dtype=None, copy=False):
    """A Tensor from a list, a scalar or an array (numpy.asarray(data, dtype) first).

    The result views the array's memory when it is C-contiguous and of a normlab dtype (float32,
    float64, float16, int32) and copy is False; otherwise it is a copy. A Python list of floats
    becomes float64, as in NumPy; pass dtype="float32" for float32. A read-only array (which normlab
    cannot view, since ops may write into their inputs' memory) is copied.
    """
    array = np.asarray(data, dtype=dtype)
    if not array.flags.writeable:
        array = array.copy()
    return Tensor(array, copy=copy)
