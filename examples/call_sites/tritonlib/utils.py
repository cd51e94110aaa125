"""What the library learns about the GPU when it is imported, and shared helpers."""

import triton
import triton.language as tl
from triton.runtime.jit import KernelInterface

# Libraries query the driver at import time (this fails without a GPU unless Triton's driver
# answers for the export's --target: see docs/call-sites.md).
_driver = triton.runtime.driver.active
TARGET = _driver.get_current_target()
ARCH = TARGET.arch  # 80 for sm_80, 90 for sm_90
NUM_SMS = _driver.utils.get_device_properties(_driver.get_current_device())["multiprocessor_count"]


@triton.jit
def softcapped(x, softcap):
    # softcap is a run-time float, or None (then Triton makes it a constexpr None).
    if softcap is not None:
        x = softcap * (2.0 * tl.sigmoid(2.0 * x / softcap) - 1.0)  # softcap * tanh(x / softcap)
    return x


class CachedLauncher(KernelInterface):
    """The library's own launcher: keeps the (autotuned) kernel in ``.fn`` and a cache of
    launch parameters, as launcher caches of public libraries do."""

    def __init__(self, fn):
        self.fn = fn
        self.launches = {}

    def run(self, *args, **kwargs):
        self.launches[kwargs.get("grid")] = self.launches.get(kwargs.get("grid"), 0) + 1
        return self.fn.run(*args, **kwargs)
