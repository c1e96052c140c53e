"""Turn a ``--judge`` value into a Judge: the registry of judge backends.

A spec (what ``--judge`` or ``evaluate(judge=)`` names) goes to the first
registered backend that claims it: an ``http(s)://`` URL or a comma list of
them to the HTTP judge or server pool, anything else (a GGUF path, a name in
``models/`` or the models manifest, such as ``demo``; None for the only GGUF
in ``models/``) to the in-process llama.cpp judge; ``checker:NAME|PATH`` to a checker
model (``checker_judge``); a judge object (scripted,
oracle, a caller's own) is used as it is. A new backend is one
``register_judge_backend`` call (docs/architecture.md, "Where to add").
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from localeval.errors import UsageError
from localeval.judge.base import Judge, declared

__all__ = ["load_judge", "register_judge_backend",
           "unregister_judge_backend", "JudgeBackendEntry", "JudgeFactory"]

#: ``build(spec, models_dir=, judge_model=, **options)``: the judge, or None when the spec
#: (None only) finds none. Raises ``ModelError`` / ``UsageError`` for a bad one.
JudgeFactory = Callable[..., "Judge | None"]


@dataclass(frozen=True)
class JudgeBackendEntry:
    """One backend in the registry.

    ``claims(spec)`` says whether a spec (a string, or None for "the default")
    names one of its judges; ``options`` are the judge options only it takes:
    they are dropped before any other backend's factory is called, so that
    e.g. ``--parallel`` never reaches an HTTP judge.
    """

    name: str
    claims: Callable[[str | None], bool]
    build: JudgeFactory
    options: frozenset[str] = frozenset()


_BACKENDS: list[JudgeBackendEntry] = []


def register_judge_backend(name: str, claims: Callable[[str | None], bool],
                           build: JudgeFactory, *, options: tuple[str, ...] = ()
                           ) -> JudgeBackendEntry:
    """Add a backend; it is asked before those registered earlier (the GGUF fallback last)."""
    entry = JudgeBackendEntry(name, claims, build, frozenset(options))
    unregister_judge_backend(name)
    _BACKENDS.insert(0, entry)
    return entry


def unregister_judge_backend(name: str) -> None:
    """Remove the backend called ``name`` (nothing if there is none)."""
    _BACKENDS[:] = [b for b in _BACKENDS if b.name != name]


def load_judge(spec: Any, *, models_dir: str | os.PathLike[str] | None = None,
               judge_model: str | None = None, **opts: Any) -> Judge | None:
    """Build the judge ``spec`` names; None when there is none to be found.

    - a judge object: itself (``declared``: one that declares no capabilities
      gets the sequential defaults).
    - None: the only ``*.gguf`` in ``models_dir`` if there is exactly one, else None.
    - ``http://`` / ``https://``: an ``HttpJudge``; ``judge_model`` picks the served model.
      Several comma-separated URLs: a ``JudgePool`` over those replicas
      (``per_endpoint_concurrency`` and ``health_interval`` in ``opts`` go to it).
    - otherwise a GGUF path or a name in ``models_dir``: a ``LlamaJudge``
      (``parallel`` in ``opts``: sequences decoded together; "auto": ``default_parallel``;
      ``draft``: prompt-lookup drafting, "auto" | "lookup" | "none").
    ``opts`` go to the judge's constructor (n_ctx, seed, n_threads, ...);
    ``timeout`` (seconds per HTTP request, ``--judge-timeout``) only to HTTP judges.
    """
    if spec is not None and not isinstance(spec, (str, os.PathLike)):
        return declared(spec)
    timeout = opts.get("timeout")
    if timeout is not None and not (isinstance(timeout, (int, float)) and 0 < timeout < 1e6):
        raise UsageError(f"--judge-timeout must be a number of seconds above 0, not {timeout!r}")
    text = None if spec is None else os.fspath(spec)
    backend = next((b for b in _BACKENDS if b.claims(text)), None)
    if backend is None:
        raise UsageError(f"no judge backend takes --judge {text!r}")
    others = set().union(*(b.options for b in _BACKENDS)) - backend.options
    opts = {k: v for k, v in opts.items() if k not in others}
    return backend.build(text, models_dir=models_dir, judge_model=judge_model, **opts)


# -- the built-in backends (the fallback first: later registrations are asked first) ----
def _is_url(spec: str | None) -> bool:
    return spec is not None and spec.lower().startswith(("http://", "https://"))


def _build_http(spec: str, *, models_dir: Any, judge_model: str | None, **opts: Any) -> Judge:
    from localeval.judge.pool import JudgePool, split_urls

    # Servers batch on their own slots; calls in flight are --judge-concurrency.
    urls = split_urls(spec)
    if len(urls) > 1 or any(k in opts for k in ("per_endpoint_concurrency",
                                                  "health_interval")):
        return JudgePool(urls, model=judge_model, **opts)
    from localeval.judge.http import HttpJudge

    return HttpJudge(spec, model=judge_model, **opts)


def _build_gguf(spec: str | None, *, models_dir: str | os.PathLike[str] | None,
                judge_model: str | None, **opts: Any) -> Judge | None:
    from localeval.catalog import locate_model

    path = locate_model(spec, "judge", models_dir)
    if path is None:
        return None
    from localeval.judge.llama.judge import LlamaJudge

    if opts.get("parallel") == "auto":
        from localeval.judge.llama.cpu import default_parallel

        opts["parallel"] = default_parallel(opts.get("n_gpu_layers", -1))
    return LlamaJudge(path, **opts)


def _is_checker(spec: str | None) -> bool:
    return spec is not None and spec.startswith("checker:")


def _build_checker(spec: str, **kw: Any) -> Judge:
    from localeval.judge.checker_judge import build_checker_judge

    return build_checker_judge(spec, **kw)


register_judge_backend("gguf", lambda spec: True, _build_gguf, options=("parallel", "draft"))
register_judge_backend("http", _is_url, _build_http,
                       options=("per_endpoint_concurrency", "health_interval", "timeout"))
# ``--checker X``: a checker model answers faithfulness's steps (docs/checkers.md)
register_judge_backend("checker", _is_checker, _build_checker,
                       options=("trust_remote_code", "checker_device", "checker_batch_size"))
