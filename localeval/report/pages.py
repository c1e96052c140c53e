"""The one toolkit every self-contained page is built with: environment, policy, assets,
writer and scales.

The run report, diff.html, the history page, testset.html, comparison.html,
validation.html and rank.html must each open offline, in a mail attachment or a CI
artefact viewer, and a data string that slipped through escaping must neither run nor
fetch anything. So every page is built the same way, here, once:

- ``page_env``: one jinja2 environment, autoescape on (every id, answer and name comes
  from users), the page's own templates first and the report's (``report.css``,
  ``report.js``, the shared macros) after them;
- ``render_page``: the report's stylesheet and script plus the page's own CSS inlined,
  and ``csp``, the one Content-Security-Policy (``default-src 'none'``, our own style
  and script by hash, nothing else), which every template puts in its meta tag;
- ``write_page``: the page written through ``results.atomic_file`` (a full disk or an
  unwritable folder is one ``OutputError`` naming the file, exit 2; no half page);
- ``Scale`` and ``domain``: the linear map from data to SVG pixels, which drops a
  non-finite value instead of writing ``nan`` or ``inf`` into a coordinate (a browser
  then draws the point at 0, or not at all, without a word).
"""

from __future__ import annotations

import base64
import hashlib
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

__all__ = ["page_env", "render_page", "page_assets", "content_security_policy", "csp_hash",
           "write_page", "Scale", "domain", "finite", "PAGE_TEMPLATES"]

#: The folder of a package's page templates (and its CSS), beside its modules.
PAGE_TEMPLATES = "templates"
#: Beyond this magnitude a span or a midpoint of two values overflows to inf.
_HUGE = 1e300


def page_env(*packages: str) -> Any:
    """The jinja2 environment of a page of ``packages`` (searched in order), then the
    report's templates; autoescape on, undefined names an error."""
    import jinja2

    names = dict.fromkeys((*packages, "localeval.report"))
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader(p, PAGE_TEMPLATES) for p in names]),
        autoescape=True,  # every dataset, judge and user string is escaped; never turn off
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=False)


def csp_hash(text: str) -> str:
    """The CSP source for an inline block: ``sha256-`` and its base64 digest."""
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def content_security_policy(css: str, js: str | None = None) -> str:
    """The one policy of every page: nothing from anywhere, our inline style (and script,
    when the page has one) by hash, images only as data URLs."""
    script = f"script-src '{csp_hash(js)}'; " if js is not None else ""
    return (f"default-src 'none'; style-src '{csp_hash(css)}'; {script}img-src data:; "
            "base-uri 'none'; form-action 'none'")


def page_assets(env: Any, css: Sequence[str] = (), *, script: bool = True) -> dict[str, Any]:
    """``css``, ``js`` and ``csp`` for a template: report.css then the page's own ``css``
    files, report.js unless ``script`` is False (``js`` is then None)."""
    from markupsafe import Markup

    source = env.loader.get_source
    style = "\n".join(source(env, name)[0] for name in ("report.css", *css))
    js = source(env, "report.js")[0] if script else None
    # our own CSS, JS and policy are static package text, not data: they go in unescaped
    return {"css": Markup(style), "js": None if js is None else Markup(js),
            "csp": Markup(content_security_policy(style, js))}


def render_page(env: Any, template: str, *, css: Sequence[str] = (), script: bool = True,
                **context: Any) -> str:
    """``template`` rendered with the page's assets (``page_assets``) and ``context``."""
    return env.get_template(template).render(**page_assets(env, css, script=script), **context)


def write_page(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` atomically (``results.atomic_file``), ending in one
    newline, and return the path."""
    from localeval.results import atomic_file

    final = Path(path)
    with atomic_file(final, newline="\n") as f:
        f.write(text if text.endswith("\n") else text + "\n")
    return final


def finite(value: Any) -> float | None:
    """``value`` as a finite float, else None (None, NaN, ±inf, a non-number)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def domain(values: Iterable[Any], *, default: tuple[float, float] = (0.0, 1.0),
           include: Iterable[float] = (), pad: float = 0.0) -> tuple[float, float]:
    """The data range of the finite ``values`` (and ``include``), widened by ``pad`` of
    its span on each side; ``default`` when none is finite; a single value is widened
    so that the range is never empty (half a unit, or 0.1% of a large value)."""
    vals = [v for v in (finite(x) for x in (*values, *include)) if v is not None]
    if not vals:
        return default
    lo, hi = (max(min(vals), -_HUGE), min(max(vals), _HUGE))
    if not hi - lo > 1e-9 * max(1.0, abs(lo), abs(hi)):
        mid = lo / 2 + hi / 2
        half = max(0.5, abs(mid) * 1e-3)
        return mid - half, mid + half
    margin = (hi - lo) * pad
    return max(lo - margin, -_HUGE), min(hi + margin, _HUGE)


@dataclass(frozen=True)
class Scale:
    """A linear map from the data range ``lo``..``hi`` to pixels ``start``..``end``
    (``end`` < ``start`` for a y axis, whose pixels grow downwards).

    Calling it gives a finite pixel or None: None for a value that is not a finite
    number, which a chart then leaves out (or names as not drawn); a finite value
    outside the range is clamped to its edge. The range is made safe on construction
    (``domain``'s rules), so no call divides by zero or overflows.
    """

    lo: float
    hi: float
    start: float
    end: float

    def __post_init__(self) -> None:
        lo, hi = domain((self.lo, self.hi), default=(0.0, 1.0))
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    def __call__(self, value: Any) -> float | None:
        v = finite(value)
        if v is None:
            return None
        v = min(max(v, self.lo), self.hi)
        return self.start + (v - self.lo) / (self.hi - self.lo) * (self.end - self.start)

    def at(self, value: Any, digits: int = 1) -> str | None:
        """The pixel as SVG text (``digits`` decimals), None where ``__call__`` is None."""
        p = self(value)
        return None if p is None else f"{p:.{digits}f}"

    def fraction(self, value: Any) -> float | None:
        """Where ``value`` lies in the range, 0 to 1 (clamped; None when not finite)."""
        v = finite(value)
        if v is None:
            return None
        return (min(max(v, self.lo), self.hi) - self.lo) / (self.hi - self.lo)

    def contains(self, value: Any) -> bool:
        """True for a finite value inside the range."""
        v = finite(value)
        return v is not None and self.lo <= v <= self.hi

    def ticks(self, n: int) -> list[float]:
        """``n`` evenly spaced data values from ``lo`` to ``hi`` (n >= 2)."""
        return [self.lo + (self.hi - self.lo) * k / (n - 1) for k in range(n)]
