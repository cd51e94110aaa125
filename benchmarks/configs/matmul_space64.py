"""The 64-config space of benchmarks/configs/matmul_space64.mlir from Python: the same configs,
in the same order, as ``triton.Config`` for ``triton.autotune`` (tests/unit/test_space.py checks
that the two agree).

    from benchmarks.configs.matmul_space64 import CONFIGS     # or exec this file
    tuned = triton.autotune(configs=CONFIGS, key=["M", "N", "K"])(matmul_kernel)
"""

from autotune_export.interop.space import product

SPACE = dict(BLOCK_M=[64, 128, 256], BLOCK_N=[64, 128, 256], BLOCK_K=[32, 64], GROUP_M=8,
             num_warps=[4, 8], num_stages=[3, 4], where="BLOCK_M * BLOCK_N <= 32768")

CONFIGS = product(**SPACE)
