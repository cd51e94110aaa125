"""Triton kernels bundled as candidates for IREE's dispatches (docs/program.md)."""
