"""The commands: ``autotune-export`` (:mod:`.cli`), ``inspect``, ``tune``, and reports."""
