"""triton.autotune kernels with prune_configs_by, for tests/lit/call_sites/prune_configs_by*.mlir:
an early_config_prune that reads a scalar argument, a tensor's element size and Triton's device
properties (answered for --target), and a perf_model with a fractional top_k."""

import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK": 128}, num_warps=1), triton.Config({"BLOCK": 256}, num_warps=2),
           triton.Config({"BLOCK": 512}, num_warps=4), triton.Config({"BLOCK": 1024}, num_warps=4)]


def fill_every_sm(configs, named_args, **kwargs):
    """Keeps the configs that launch at least one program per SM for n elements and move at
    least 512 bytes per program."""
    sms = triton.runtime.driver.active.utils.get_device_properties(0)["multiprocessor_count"]
    n, size = named_args["n"], named_args["x_ptr"].element_size()
    return [c for c in configs if n // c.kwargs["BLOCK"] >= sms and c.kwargs["BLOCK"] * size >= 512]


def programs_plus_warps(n, BLOCK, num_warps, **kwargs):
    """A made-up cost: one unit per program, 100 per warp."""
    return triton.cdiv(n, BLOCK) + 100 * num_warps


@triton.jit
def _scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


scale_early = triton.autotune(CONFIGS, key=["n"], prune_configs_by={"early_config_prune": fill_every_sm})(_scale)
scale_perf = triton.autotune(CONFIGS, key=["n"], prune_configs_by={"perf_model": programs_plus_warps, "top_k": 0.5})(_scale)


def reads_shape(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK"] <= named_args["x_ptr"].shape[0]]


def keeps_nothing(configs, named_args, **kwargs):
    return []


def top_k_is_a_string(n, BLOCK, **kwargs):
    return BLOCK


scale_reads_shape = triton.autotune(CONFIGS, key=["n"], prune_configs_by={"early_config_prune": reads_shape})(_scale)
scale_keeps_nothing = triton.autotune(CONFIGS, key=["n"], prune_configs_by={"early_config_prune": keeps_nothing})(_scale)
scale_bad_top_k = triton.autotune(CONFIGS, key=["n"], prune_configs_by={"perf_model": top_k_is_a_string, "top_k": "2"})(_scale)


def up_to_n(configs, named_args, **kwargs):
    """Keeps the configs whose block fits in n elements (the kernel below does not mask)."""
    return [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"]]


@triton.autotune(CONFIGS, key=["n"], prune_configs_by={"early_config_prune": up_to_n})
@triton.jit
def scale_unmasked(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2.0)
