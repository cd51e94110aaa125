"""CUDA and Triton: variant compilation (parallel, cached), kernel loading, TTIR analysis,
PTX linking, IREE's CUDA calling convention (:mod:`.abi`), targets and their limits."""
