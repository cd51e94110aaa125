"""A library that makes its Triton kernels at run time (issue 23 item 3), as the kernel
libraries of the held-out corpus do:

* ``make_axpby(dtype)``: a factory defining a ``@triton.jit`` kernel per output dtype, kept in a
  dataclass in a dict (``AXPBY["fp16"].kernel``); the kernel reads the factory's closure (the
  output dtype, a ``tl.constexpr`` block), a global of this module (``ALPHA``) and a helper of
  another module (``helpers.bias``, which reads ``helpers.SHIFT``);
* ``make_scale(factor)``: ``triton.jit`` applied to a nested ``def`` (no decorator);
* ``make_rowsum()``: an autotuned kernel made inside a function that accumulates with atomics
  (``reset_to_zero``), whose autotuner's reset_to_zero travels with the carried source.

``launch_to_mlir`` exports each from the kernel object: the module carries the kernel's source
and the values it reads (docs/call-sites.md, "Kernels made at run time")."""

import dataclasses

import triton
import triton.language as tl

import helpers

ALPHA = tl.constexpr(2.0)


@dataclasses.dataclass
class Made:
    kernel: object
    dtype: object


def make_axpby(out_dtype):
    BLOCK = tl.constexpr(256)

    @triton.jit
    def axpby(x_ptr, y_ptr, out_ptr, n, beta):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, (ALPHA * x + beta * helpers.bias(y)).to(out_dtype), mask=mask)

    return Made(axpby, out_dtype)


AXPBY = {"fp16": make_axpby(tl.float16), "fp32": make_axpby(tl.float32)}


def make_scale(factor):
    FACTOR = tl.constexpr(factor)

    def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * FACTOR, mask=offs < n)

    return triton.jit(scale)


def make_rowsum():
    @triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=2), triton.Config({"BLOCK": 256}, num_warps=4)],
                     key=["n"], reset_to_zero=["acc_ptr"])
    @triton.jit
    def rowsum(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.atomic_add(acc_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))

    return rowsum
