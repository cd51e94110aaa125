"""Import-time registration of the library's kernels (as libraries register custom ops): a
module that registers twice raises, so a kernel module must be imported once per process."""

_KERNELS: dict[str, object] = {}


def register(name: str, kernel):
    if name in _KERNELS:
        raise RuntimeError(f"kernel {name!r} is registered twice (its module was imported twice)")
    _KERNELS[name] = kernel
    return kernel


def registered() -> list[str]:
    return sorted(_KERNELS)
