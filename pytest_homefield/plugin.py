"""pytest entry point (``pytest11: homefield``). Inert unless a ``--homefield*`` mode option is given."""
