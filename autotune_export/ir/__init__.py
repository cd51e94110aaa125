"""The IR layer over ``iree.compiler.ir``: the group op's schema (:mod:`.group`), the only
reader/writer of ``#hal.*`` attribute text (:mod:`.hal_attrs`), builders of executables and
exports (:mod:`.builders`) and of functions, globals, calls and loops (:mod:`.functions`),
discardable attributes passed between passes (:mod:`.markers`), typed accessors and walking
(:mod:`.walk`), and launch-grid expressions (:mod:`.grid`)."""
