"""A small Triton kernel library written the way public ones are (flash-attn's layer norm,
Liger's cross entropy, fp8 GEMM libraries): a package with relative imports, kernels
registered when imported, configs chosen from the GPU Triton's driver reports at import time,
kernels behind the library's own launcher objects, optional (None) arguments, dtype
constexprs, int64 and fp8 tensors. The .mlir files next to this package export its kernels
as they are written."""

from . import registry  # noqa: F401  (import-time registration, as libraries do)
