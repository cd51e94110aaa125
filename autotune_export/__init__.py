"""autotune-export: Triton kernels inside IREE-compiled programs, with their auto-tuning intact.

See README.md for the pipeline, the extension syntax (``hal.executable.autotuning.export``)
and the three ways to call the toolkit (CLI, library, lit tests).
"""

__version__ = "0.1.0"
