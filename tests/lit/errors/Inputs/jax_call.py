"""Print the module of a triton_call-style invocation, or its error as `error: ...` (status 1).
Usage: jax_call.py CASE (see CASES)."""
import importlib.util
import os
import sys

import numpy as np

from autotune_export.interop.jax_triton import JaxTritonError, triton_call_to_mlir

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("jax_fixture_kernels", os.path.join(HERE, "..", "..", "..", "fixtures", "jax", "kernels.py"))
kernels = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = kernels
spec.loader.exec_module(kernels)


class Spec:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, np.dtype(dtype)


x = Spec((4096,), "float32")
# add_kernel(x_ptr, y_ptr, n, out_ptr, BLOCK); scale_add_kernel(x_ptr, y_ptr, n, scale, out_ptr, BLOCK)
CASES = {
    "right": lambda: triton_call_to_mlir(x, x, 4096, kernel=kernels.add_kernel, out_shape=x, grid=(4,), BLOCK=1024),
    "scalar-for-pointer": lambda: triton_call_to_mlir(x, 4096, x, kernel=kernels.add_kernel, out_shape=x, grid=(4,), BLOCK=1024),
    "array-for-scalar": lambda: triton_call_to_mlir(x, x, x, kernel=kernels.add_kernel, out_shape=x, grid=(4,), BLOCK=1024),
    "scale-before-n": lambda: triton_call_to_mlir(x, x, np.float32(0.5), 4096, kernel=kernels.scale_add_kernel, out_shape=x,
                                                  grid=(4,)),
}
try:
    sys.stdout.write(CASES[sys.argv[1]]())
except JaxTritonError as err:
    print(f"error: {err}", file=sys.stderr)
    sys.exit(1)
