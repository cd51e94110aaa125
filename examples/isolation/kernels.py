"""out = 2 * x (fp32) with two configs that a tuner must survive (issue 24 item 5).

``FAR = 1`` also stores every value 2^40 elements (4 TiB) past ``out_ptr``: unmapped device
memory, a CUDA illegal address, which poisons the CUDA context of the process that launched it.
``STEP = 0`` never terminates: the store sits in a loop ``i = 0; while i < 1: ...; i += STEP``
that runs once for ``STEP = 1`` and forever for ``STEP = 0`` (its stores keep the compiler from
removing it). Launch: a 1-D grid of cdiv(n, BLOCK) programs; each handles BLOCK consecutive
elements, the tail masked.
"""
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, FAR: tl.constexpr, STEP: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    i = 0
    while i < 1:
        tl.store(out_ptr + offsets, 2 * x, mask=mask)
        i += STEP
    if FAR:
        tl.store(out_ptr + (offsets.to(tl.int64) + (1 << 40)), 2 * x, mask=mask)
