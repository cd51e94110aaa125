"""A kernel that takes a spin lock in an integer tensor (issue 21, item 10): each program
sums its block of x and adds the sum to out[0] under the lock (tl.atomic_cas to take it,
tl.atomic_xchg to release it). A lock that holds anything but 0 when the kernel starts is
never released: the kernel spins forever."""

import triton
import triton.language as tl


@triton.jit
def locked_sum(x_ptr, out_ptr, lock_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0))
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(out_ptr, tl.load(out_ptr) + s)
    tl.atomic_xchg(lock_ptr, 0)
