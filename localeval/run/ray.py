"""Scale-out over a Ray cluster: shard samples across actors, stream results back in order.

Each ``_Scorer`` actor loads its own judge and embedder once (with the CPU/GPU
resources it asks for) and scores whole samples, so llama.cpp still reuses
each sample's KV prefix. The driver keeps a few samples in flight per actor,
yields scores in input order (the runner writes ``results.jsonl`` and the
summary exactly as in a single-process run) and, when an actor dies, sends
its unfinished samples to the others and starts a replacement.

Cache consistency: one ``_CacheServer`` actor, pinned to the driver's node, owns the
run's SQLite cache file; every actor reads and writes judge calls and
embeddings through it. Chosen over letting each actor open the file because
SQLite's WAL needs shared memory on one host and is unsafe on network file
systems: with one writer on the driver's node the cache is correct on any
cluster shape, and a restarted run finds every finished call (the cost, one
small RPC per judge call, is noise beside a model call).
"""

from __future__ import annotations

import os
from collections import deque
from typing import Any, Iterator, Sequence

from localeval.errors import ModelError, UsageError
from localeval.metrics import Judging, Metric
from localeval.run.workers import SampleScorer, ScoredSample, WorkerSpec
from localeval.types import Sample, Score

__all__ = ["ray_stream", "CRASH_HOOK_ENV"]

#: Test hook: a file path; the first actor to score its second sample while the
#: file does not exist creates it and exits hard (a worker lost mid-run).
CRASH_HOOK_ENV = "LOCALEVAL_RAY_CRASH_MARKER"

#: Samples queued per actor beyond the one it is working on (hides RPC latency).
_IN_FLIGHT_PER_ACTOR = 2
#: A sample whose actor died this many times fails the run (it is probably the cause).
_MAX_ATTEMPTS = 3


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError("--ray needs Ray: pip install 'localeval[ray]'") from None
    return ray


class _CacheClient:
    """The ``Cache`` methods the judge and embedder wrappers use, forwarded to the cache actor."""

    def __init__(self, handle: Any) -> None:
        self._h = handle

    def _call(self, name: str, *args: Any) -> Any:
        import ray

        return ray.get(getattr(self._h, name).remote(*args))

    def get_call(self, key: str) -> Any:
        return self._call("get_call", key)

    def put_call(self, key: str, judge: str, step: str, value: dict[str, Any]) -> None:
        self._call("put_call", key, judge, step, value)

    def get_vectors(self, embedder: str, keys: Any) -> Any:
        return self._call("get_vectors", embedder, list(keys))

    def put_vectors(self, embedder: str, items: Any) -> None:
        self._call("put_vectors", embedder, dict(items))


class _CacheServer:
    """Body of the cache actor: the driver's ``Cache`` file, one writer."""

    def __init__(self, path: str) -> None:
        from localeval.cache import Cache

        self.cache = Cache(path)

    def get_call(self, key: str) -> Any:
        return self.cache.get_call(key)

    def put_call(self, key: str, judge: str, step: str, value: dict[str, Any]) -> None:
        self.cache.put_call(key, judge, step, value)

    def get_vectors(self, embedder: str, keys: list[str]) -> Any:
        return self.cache.get_vectors(embedder, keys)

    def put_vectors(self, embedder: str, items: dict[str, Any]) -> None:
        self.cache.put_vectors(embedder, items)


class _Scorer(SampleScorer):
    """Body of a scoring actor: a ``SampleScorer`` (own judge and embedder), plus the crash hook."""

    def __init__(self, spec: WorkerSpec, cache: Any, crash_marker: str | None) -> None:
        super().__init__(spec, _CacheClient(cache) if cache is not None else None)
        self.crash_marker = crash_marker
        self.done = 0

    def ready(self) -> bool:
        return True

    def score(self, s: Sample) -> ScoredSample:
        if self.crash_marker and self.done >= 1:
            try:
                fd = os.open(self.crash_marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                os.close(fd)
                os._exit(1)
            except FileExistsError:
                pass
        done = super().score(s)
        self.done += 1
        return done


def _connect(ray: Any, address: str | bool | None) -> bool:
    """Join (or start) Ray; True when this call started it and must shut it down."""
    if ray.is_initialized():
        return False
    addr = None if address in (None, True, "auto", "local", "") else str(address)
    ray.init(address=addr, include_dashboard=False, log_to_driver=False,
             ignore_reinit_error=True)
    return True


def _default_actors(ray: Any, num_gpus_per_actor: float) -> int:
    res = ray.cluster_resources()
    if num_gpus_per_actor > 0:
        n = int(res.get("GPU", 0) // num_gpus_per_actor)
        if n < 1:
            raise ModelError(f"the Ray cluster has {res.get('GPU', 0):g} GPUs; each actor "
                             f"asks for {num_gpus_per_actor:g}")
        return n
    return max(1, int(res.get("CPU", 1)))


def ray_stream(samples: Sequence[Sample], metrics: Sequence[Metric], ctx: Judging, judge: Any,
               judge_options: dict[str, Any] | None, embedder: Any, cache_path: str | None,
               device: str, repeats: int, address: str | bool | None = None,
               num_actors: int | None = None, num_gpus_per_actor: float = 0,
               num_cpus_per_actor: float = 1) -> Iterator[dict[str, Score]]:
    """Score ``samples`` on Ray actors; yield each sample's model scores in input order.

    Like ``strategies.process_stream``: judge and embedder are given as
    paths, names or URLs (each actor loads its own); usage and prompt
    versions are summed into ``ctx``. A sample whose actor dies is sent to another actor
    (a replacement is started); it fails the run after ``_MAX_ATTEMPTS``.
    """
    spec = WorkerSpec.for_run(judge, judge_options, embedder, device, metrics, repeats, ctx,
                              flag="--ray", forms="a path, name or URL")
    ray = _import_ray()
    import ray.exceptions as rex

    # ActorDiedError / ActorUnavailableError are subclasses in newer Ray, absent in older
    lost = tuple(getattr(rex, n) for n in ("RayActorError", "ActorDiedError",
                                            "ActorUnavailableError") if hasattr(rex, n))
    started = _connect(ray, address)
    spawned: list[Any] = []
    try:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = ray.get_runtime_context().get_node_id()
        cache = None
        if cache_path:
            cache = ray.remote(num_cpus=0)(_CacheServer).options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False),
                max_concurrency=16).remote(str(cache_path))
            spawned.append(cache)
        n = num_actors or _default_actors(ray, num_gpus_per_actor)
        n = max(1, min(n, len(samples)))
        init = (spec, cache, os.environ.get(CRASH_HOOK_ENV))
        actor_cls = ray.remote(num_cpus=num_cpus_per_actor, num_gpus=num_gpus_per_actor,
                               max_restarts=0)(_Scorer)

        def spawn() -> Any:
            spawned.append(actor_cls.remote(*init))
            return spawned[-1]

        actors = [spawn() for _ in range(n)]
        try:
            ray.get([a.ready.remote() for a in actors])
        except lost as e:
            raise ModelError(f"a Ray actor failed to start: {e}") from None
        except ray.exceptions.RayTaskError as e:
            raise ModelError(f"a Ray actor failed to load its models: {e.cause}") from None
        yield from _dispatch(ray, lost, samples, actors, spawn, ctx)
    finally:
        # free the cluster's resources at once, also when the run is interrupted
        for a in spawned:
            try:
                ray.kill(a, no_restart=True)
            except Exception:  # already dead
                pass
        if started:
            ray.shutdown()


def _dispatch(ray: Any, lost: tuple[type[BaseException], ...], samples: Sequence[Sample],
              actors: list[Any], spawn: Any, ctx: Judging) -> Iterator[dict[str, Score]]:
    todo: deque[int] = deque(range(len(samples)))
    attempts = [0] * len(samples)
    load = {a: 0 for a in actors}
    running: dict[Any, tuple[int, Any]] = {}  # ref -> (sample index, actor)
    done: dict[int, ScoredSample] = {}
    nxt = 0
    while nxt < len(samples):
        # keep every live actor busy, spreading samples round-robin
        for level in range(1, 2 + _IN_FLIGHT_PER_ACTOR):
            for a in list(load):
                if todo and load[a] < level:
                    i = todo.popleft()
                    attempts[i] += 1
                    running[a.score.remote(samples[i])] = (i, a)
                    load[a] += 1
        ready, _ = ray.wait(list(running), num_returns=1)
        for ref in ready:
            i, a = running.pop(ref)
            try:
                done[i] = ray.get(ref)
                load[a] -= 1
            except lost:
                # the actor is gone: requeue this sample and every other one it held
                if a in load:
                    del load[a]
                    ray.kill(a, no_restart=True)
                    load[spawn()] = 0
                retry = [i] + [j for r, (j, b) in list(running.items()) if b is a]
                for r in [r for r, (_, b) in running.items() if b is a]:
                    running.pop(r)
                for j in sorted(retry, reverse=True):
                    if attempts[j] >= _MAX_ATTEMPTS:
                        raise ModelError(f"sample {samples[j].id!r} was lost with "
                                         f"{attempts[j]} Ray workers; giving up") from None
                    todo.appendleft(j)
        while nxt in done:
            scores = done.pop(nxt).merge_into(ctx)
            nxt += 1
            yield scores
