"""Bridges from other front ends: jax-triton's ``triton_call`` and ``jax.export`` StableHLO."""
