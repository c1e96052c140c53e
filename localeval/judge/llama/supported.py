"""The llama-cpp-python releases ``compat.py`` was written for, as pip reads a range.

``compat.check_version`` refuses any other (``LOCALEVAL_ALLOW_LLAMA_CPP_VERSION=1``:
a warning instead). The range is read with PEP 440's rules as ``packaging``
implements them, pip's own: a pre-release or development release is outside a
range that names none, so the judge never runs on a release pip would not
have installed for ``llama-cpp-python>=0.3.36,<0.4.0``. No llama_cpp here.
"""

from __future__ import annotations

__all__ = ["SUPPORTED", "ALLOW_ENV", "supported_text", "version_supported"]

#: llama-cpp-python releases compat.py was written for: from the first (inclusive) to
#: the second (exclusive). 0.3.36 is the one tested; a 0.3.x patch release keeps the
#: C API compat.py uses, a minor release has changed it before.
SUPPORTED = ((0, 3, 36), (0, 4, 0))
#: Set to 1 to run on another llama-cpp-python anyway (a warning instead of the error).
ALLOW_ENV = "LOCALEVAL_ALLOW_LLAMA_CPP_VERSION"


def supported_text() -> str:
    """The supported range as a pip requirement specifier, e.g. ``>=0.3.36,<0.4.0``."""
    lo, hi = (".".join(map(str, v)) for v in SUPPORTED)
    return f">={lo},<{hi}"


def version_supported(version: str) -> bool:
    """Whether pip would install ``version`` for the supported range (PEP 440, ``packaging``):
    a pre-release (0.3.37rc1, 0.3.37.dev0) is outside it, a local version (0.3.36+cu124) in."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    spec = SpecifierSet(supported_text())
    try:
        parsed = Version(version)
    except InvalidVersion:
        return False
    # explicit: recent ``packaging`` lets ``contains`` admit a lone pre-release by default
    return spec.contains(parsed, prereleases=bool(spec.prereleases))
