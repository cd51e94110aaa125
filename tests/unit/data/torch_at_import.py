"""A kernel file written as PyTorch libraries write them: it asks torch about the GPU when it is
imported (Triton's tutorials' DEVICE, the device properties, the capability), allocates GPU
tensors at import time, and prunes its configs with torch. Used by
tests/unit/test_torch_at_import.py (exported on a machine without a GPU)."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
PROPS = torch.cuda.get_device_properties(DEVICE)
NUM_SMS = PROPS.multi_processor_count
MAJOR, MINOR = torch.cuda.get_device_capability()
NAME = torch.cuda.get_device_name()
SMEM = PROPS.shared_memory_per_block_optin
AVAILABLE = torch.cuda.is_available() and torch.cuda.device_count() == 1 and torch.cuda.current_device() == 0
BF16 = torch.cuda.is_bf16_supported()
# Buffers a library keeps from import time on (a workspace per SM, locks, a lookup table).
WORKSPACE = torch.empty(NUM_SMS * 4, device=DEVICE, dtype=torch.int32)
LOCKS = torch.zeros(NUM_SMS, device="cuda", dtype=torch.int32)
TABLE = torch.arange(16, dtype=torch.float32).cuda()
BLOCK = 1024 if MAJOR >= 9 else 256


def fits_in_shared_memory(configs, named_args, **kwargs):
    """Keeps the configs whose pipelined tile of x takes at most a quarter of the opt-in shared
    memory; only for float32 (compared as torch dtypes: what a PyTorch launch passes)."""
    x = named_args["x_ptr"]
    if x.dtype != torch.float32:
        return configs
    limit = torch.cuda.get_device_properties(torch.cuda.current_device()).shared_memory_per_block_optin // 4
    return [c for c in configs if c.kwargs["BLOCK"] * x.element_size() * c.num_stages <= limit]


@triton.autotune(configs=[triton.Config({"BLOCK": BLOCK, "NUM_SMS": NUM_SMS}, num_warps=4),
                          triton.Config({"BLOCK": 8192, "NUM_SMS": NUM_SMS}, num_warps=8)],
                 key=["n"], prune_configs_by={"early_config_prune": fits_in_shared_memory})
@triton.jit
def persistent_scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr, NUM_SMS: tl.constexpr):
    # One program per SM, striding over the blocks.
    for start in range(tl.program_id(0) * BLOCK, n, NUM_SMS * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)
