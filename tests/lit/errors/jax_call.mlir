// The jax-triton bridge (triton_call_to_mlir) checks a call's arguments against how the
// kernel uses its parameters (read from its Python source, nothing compiled): a static scalar
// where the kernel loads through a pointer, or an array where it compares or multiplies a
// scalar, names the argument (once an impossible signature that failed as a Triton compile
// error of materialize-triton-variants).
//
// RUN: %atx-python %S/Inputs/jax_call.py right | FileCheck %s --check-prefix=RIGHT
// RIGHT: signature(x_ptr: *fp32, y_ptr: *fp32, n: i32, out_ptr: *fp32 {output})
//
// RUN: not %atx-python %S/Inputs/jax_call.py scalar-for-pointer 2>&1 | FileCheck %s --check-prefix=PTR
// PTR: error: argument 1 ('y_ptr') is a static i32 (4096), but kernel 'add_kernel' uses 'y_ptr' as a pointer (line {{[0-9]+}}: tl.load(y_ptr + offs, mask=mask)); pass an array there (the kernel's parameters, in order: x_ptr, y_ptr, n, out_ptr; the outputs come after all inputs)
// PTR-NOT: Traceback
//
// RUN: not %atx-python %S/Inputs/jax_call.py array-for-scalar 2>&1 | FileCheck %s --check-prefix=SCALAR
// SCALAR: error: argument 2 ('n') is an array (tensor<4096xf32>), but kernel 'add_kernel' uses 'n' as a scalar (line {{[0-9]+}}: offs < n)
//
// An autotuned kernel (the Autotuner is unwrapped): scale and n swapped are both scalars, so
// the call is accepted as far as the roles go; the fp32 given for n reaches the signature.
// RUN: %atx-python %S/Inputs/jax_call.py scale-before-n | FileCheck %s --check-prefix=SWAP
// SWAP: signature(x_ptr: *fp32, y_ptr: *fp32, n: fp32, scale: i32, out_ptr: *fp32 {output})
