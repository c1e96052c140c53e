"""The ``localeval`` command: one module per command group.

``app`` parses and dispatches (``main``); ``run`` (run, retrieval), ``metrics``,
``agreement`` (compare, validate), ``models``, ``report`` and ``cache`` each
add their subcommands and run them; ``example`` names the bundled dataset.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "build_parser": ".app",
    "example_path": ".example",
    "main": ".app",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
