"""The bottom layer, imported by every other: located diagnostics, file locations and atomic
writes, progress output. Nothing here imports another part of autotune_export."""
