"""Print the module of a triton_call-style invocation of the autotuned scale_add kernel."""
import importlib.util
import os
import sys

import numpy as np

from autotune_export.interop.jax_triton import triton_call_to_mlir

HERE = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(HERE, "..", "..", "..", "fixtures", "jax", "kernels.py")
spec = importlib.util.spec_from_file_location("jax_fixture_kernels", path)
kernels = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = kernels
spec.loader.exec_module(kernels)


class Spec:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, np.dtype(dtype)


x = Spec((4096,), "float32")
mode = sys.argv[1] if len(sys.argv) > 1 else "autotuned"
if mode == "autotuned":
    text = triton_call_to_mlir(x, x, 4096, np.float32(0.5), kernel=kernels.scale_add_kernel, out_shape=x,
                               grid=lambda meta: ((4096 + meta["BLOCK"] - 1) // meta["BLOCK"],), name="scale_add")
elif mode == "zeroed":
    text = triton_call_to_mlir(x, 4096, kernel=kernels.row_sum_kernel, out_shape=Spec((1,), "float32"), grid=(4,),
                               zeroed_outputs=(0,), BLOCK=1024)
else:
    raise SystemExit(f"unknown mode {mode}")
sys.stdout.write(text)
