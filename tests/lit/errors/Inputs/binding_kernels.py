"""Kernels for the binding tests in tests/lit/errors and tests/lit/passes (written for these
tests): which dispatch operand or result each pointer and scalar is bound to."""

import triton
import triton.language as tl


# Two outputs: acc is updated (read, then written), out only written.
@triton.jit
def acc_and_out(x_ptr, acc_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(acc_ptr + offs, tl.load(acc_ptr + offs, mask=mask) + x, mask=mask)
    tl.store(out_ptr + offs, x * 2.0, mask=mask)


# The same, the parameters in other orders.
@triton.jit
def acc_first(acc_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc_and_out(x_ptr, acc_ptr, out_ptr, n, BLOCK)


@triton.jit
def out_then_acc(x_ptr, out_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    acc_and_out(x_ptr, acc_ptr, out_ptr, n, BLOCK)


# A scalar parameter the dispatch must pass with the parameter's own type.
@triton.jit
def add_eps(x_ptr, out_ptr, eps, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + eps, mask=mask)


# Writes its output from scalars only (an iota): the dispatch has no tensor operand.
@triton.jit
def iota(out_ptr, start, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, (offs + start).to(tl.float32), mask=offs < n)


# Reads its {output} before writing it (out += x): an untied result has undefined contents.
@triton.jit
def accumulate(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask) + tl.load(x_ptr + offs, mask=mask), mask=mask)


# Writes its {output} first, then reads it back (no warning: what it reads it wrote).
@triton.jit
def store_then_load(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask) * 2.0, mask=mask)
