# A kernel file in the shape torch.compile (Inductor) writes into its cache: imports from
# torch._inductor.runtime, triton_helpers.set_driver_to_gpu() when imported, and a
# @triton.jit kernel wrapped in triton_heuristics.pointwise(...), whose result is a
# CachingAutotuner (not a Triton Autotuner) with the JITFunction as .fn. Written for the tests
# (tests/unit/test_torch_at_import.py): out = relu(a * 2 + b) over xnumel elements.
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.hints import DeviceProperties

triton_helpers.set_driver_to_gpu()


@triton_heuristics.pointwise(
    size_hints={"x": 1024},
    filename=__file__,
    triton_meta={"signature": {"in_ptr0": "*fp32", "in_ptr1": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32",
                               "XBLOCK": "constexpr"},
                 "device": DeviceProperties(type="cuda", index=0, multi_processor_count=132, cc=90, major=9,
                                            regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048,
                                            warp_size=32),
                 "constants": {}, "configs": []},
    inductor_meta={"grid_type": "Grid1D", "kernel_name": "triton_poi_fused_add_mul_relu_0", "mutated_arg_names": [],
                   "num_load": 2, "num_reduction": 0},
    min_elem_per_thread=0,
)
@triton.jit
def triton_poi_fused_add_mul_relu_0(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    a = tl.load(in_ptr0 + xindex, xmask)
    b = tl.load(in_ptr1 + xindex, xmask)
    tmp = a * 2.0 + b
    tl.store(out_ptr0 + xindex, tl.where(tmp > 0, tmp, 0.0), xmask)
