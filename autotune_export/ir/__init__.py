"""The IR layer over ``iree.compiler.ir``: the group op's schema (:mod:`.group`), the only
reader/writer of ``#hal.*`` attribute text (:mod:`.hal_attrs`), builders of exports, functions,
globals and dispatch chains (:mod:`.builders`), typed accessors and walking (:mod:`.walk`), and
launch-grid expressions (:mod:`.grid`)."""
