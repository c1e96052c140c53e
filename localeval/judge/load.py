"""Turn a ``--judge`` value into a Judge: a URL, a GGUF path, a name in models/."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from localeval.errors import ModelError, UsageError
from localeval.judge.base import Judge

__all__ = ["load_judge", "resolve_model_path"]


def resolve_model_path(spec: str | None, models_dir: str | os.PathLike[str] = "models"
                       ) -> Path | None:
    """The GGUF file ``spec`` names, or None when ``spec`` is None and models/ has not
    exactly one GGUF.

    A path (absolute, relative, or anything with a separator or ``.gguf``
    suffix) must exist; a bare name is looked up as ``models_dir/NAME`` and
    ``models_dir/NAME.gguf``.
    """
    mdir = Path(models_dir)
    if spec is None:
        found = sorted(mdir.glob("*.gguf")) if mdir.is_dir() else []
        return found[0] if len(found) == 1 else None
    p = Path(spec).expanduser()
    looks_like_path = p.is_absolute() or os.sep in spec or "/" in spec or spec.endswith(".gguf")
    candidates = [p] if looks_like_path else []
    if not p.is_absolute():
        candidates += [mdir / spec, mdir / f"{spec}.gguf"]
    if not looks_like_path:
        candidates.append(p)
    for c in candidates:
        if c.is_file():
            return c
    if not looks_like_path:
        # A name from the models manifest: its file, or exactly where to put it.
        from localeval.catalog import load_models, resolve_model

        if load_models(mdir).find(spec, "judge") is not None:
            return resolve_model(spec, "judge", mdir)
    tried = ", ".join(str(c) for c in dict.fromkeys(candidates))
    raise ModelError(f"judge model not found: {spec} (looked for {tried}); put the GGUF file "
                     f"in {mdir}/ or pass a path")


def load_judge(spec: str | None, *, models_dir: str | os.PathLike[str] = "models",
               judge_model: str | None = None, **opts: Any) -> Judge | None:
    """Build the judge ``spec`` names; None when there is none to be found.

    - None: the only ``*.gguf`` in ``models_dir`` if there is exactly one, else None.
    - ``http://`` / ``https://``: an ``HttpJudge``; ``judge_model`` picks the served model.
      Several comma-separated URLs: a ``JudgePool`` over those replicas
      (``per_endpoint_concurrency`` and ``health_interval`` in ``opts`` go to it).
    - otherwise a GGUF path or a name in ``models_dir``: a ``LlamaJudge``
      (``parallel`` in ``opts``: sequences decoded together; "auto": ``default_parallel``).
    ``opts`` go to the judge's constructor (n_ctx, seed, n_threads, ...);
    ``timeout`` (seconds per HTTP request, ``--judge-timeout``) only to HTTP judges;
    ``draft`` (``--draft``) only to in-process judges.
    """
    timeout = opts.get("timeout")
    if timeout is not None and not (isinstance(timeout, (int, float)) and 0 < timeout < 1e6):
        raise UsageError(f"--judge-timeout must be a number of seconds above 0, not {timeout!r}")
    if spec is not None and spec.lower().startswith(("http://", "https://")):
        from localeval.judge.pool import JudgePool, split_urls

        # Servers batch on their own slots; calls in flight are --judge-concurrency.
        opts.pop("parallel", None)
        opts.pop("draft", None)  # in-process decoding only

        urls = split_urls(spec)
        if len(urls) > 1 or any(k in opts for k in ("per_endpoint_concurrency",
                                                      "health_interval")):
            return JudgePool(urls, model=judge_model, **opts)
        from localeval.judge.http import HttpJudge

        return HttpJudge(spec, model=judge_model, **opts)
    for k in ("per_endpoint_concurrency", "health_interval", "timeout"):  # HTTP-only options
        opts.pop(k, None)
    path = resolve_model_path(spec, models_dir)
    if path is None:
        return None
    from localeval.judge.llama.judge import LlamaJudge

    if opts.get("parallel") == "auto":
        from localeval.judge.llama.cpu import default_parallel

        opts["parallel"] = default_parallel(opts.get("n_gpu_layers", -1))
    return LlamaJudge(path, **opts)
