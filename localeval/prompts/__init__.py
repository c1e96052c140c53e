"""Judge prompts: the Jinja2 templates beside this file and their renderer.

The renderer lives in ``renderer.py``, not ``render.py``: a submodule named
like the face's ``render`` function would replace that function on the
package once imported.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "copies_in": ".examples",
    "example_lines": ".examples",
    "find_copies": ".examples",
    "prompt_version": ".renderer",
    "render": ".renderer",
    "sample_block": ".renderer",
    "sample_language": ".renderer",
    "steps": ".renderer",
    "system_text": ".renderer",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
