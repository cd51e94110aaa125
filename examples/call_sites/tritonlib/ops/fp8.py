"""fp8 (e4m3) to a wider dtype with a per-tensor scale, a persistent kernel of one program per
SM (the SM count read from the driver when the module is imported)."""

import triton
import triton.language as tl

from ..registry import register
from ..utils import NUM_SMS


@triton.jit
def fp8_dequant(x_ptr, y_ptr, scale, n, BLOCK: tl.constexpr, NUM_PROGRAMS: tl.constexpr, OUT_DTYPE: tl.constexpr):
    pid = tl.program_id(0)
    for start in range(pid * BLOCK, n, NUM_PROGRAMS * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + offs, (x * scale).to(OUT_DTYPE), mask=mask)


fp8_dequant_tuned = register("fp8_dequant", triton.autotune(
    [triton.Config({"BLOCK": b, "NUM_PROGRAMS": NUM_SMS, "OUT_DTYPE": tl.bfloat16}, num_warps=w)
     for b in (512, 1024) for w in (4, 8)],
    key=["n"])(fp8_dequant))
