"""A local OpenAI-compatible judge server for the ragas baseline, stopped whatever happens.

ragas calls its judge over the OpenAI API, so the baseline serves the same
GGUF with llama-cpp-python's own server (``python -m llama_cpp.server``) on
127.0.0.1 and a free port. The server is started through a small launcher
(``python -c LAUNCHER module args...``) that

- appends the apart install folders (``pip install --target DIR``) to
  ``sys.path`` *after* site-packages, so the server's extra dependencies can
  live outside the project's install while the venv's versions win;
- watches its parent and exits when the parent is gone, so a benchmark killed
  with SIGKILL leaves no server behind (``stop()`` and the SIGTERM handler
  cover every other ending).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any, Sequence

__all__ = ["ServerError", "LAUNCHER", "SERVER_MODULES", "free_port", "missing_modules",
           "llama_server_args", "ServerProcess"]

#: What ``python -m llama_cpp.server`` imports beyond llama-cpp-python itself
#: (its ``[server]`` extra), by import name.
SERVER_MODULES = ("fastapi", "uvicorn", "sse_starlette", "starlette_context",
                  "pydantic_settings")

LAUNCHER = """\
import os, runpy, sys, threading, time
parent = os.getppid()
def _watch():
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
threading.Thread(target=_watch, daemon=True).start()
sys.path.extend(p for p in os.environ.get("BENCH_APART_PATH", "").split(os.pathsep) if p)
module = sys.argv.pop(1)
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


class ServerError(RuntimeError):
    """The judge server could not be started (exit code 3: model or environment)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def missing_modules(apart: Sequence[str | os.PathLike[str]],
                    modules: Sequence[str] = SERVER_MODULES) -> list[str]:
    """The ``modules`` that a Python with ``apart`` appended to its path cannot find.

    Asked of a child interpreter so that the benchmark's own ``sys.path``
    (ragas's apart folder) does not decide what the server will see.
    """
    code = ("import importlib.util, sys\n"
            "sys.path.extend(sys.argv[1].split(__import__('os').pathsep))\n"
            "print(' '.join(m for m in sys.argv[2:] if importlib.util.find_spec(m) is None))")
    p = subprocess.run([sys.executable, "-c", code, os.pathsep.join(map(str, apart)),
                        *modules], capture_output=True, text=True, timeout=60)
    return p.stdout.split() if p.returncode == 0 else list(modules)


def llama_server_args(model: str | os.PathLike[str], port: int, *, n_ctx: int | None,
                      n_threads: int | None, chat_format: str | None, alias: str,
                      seed: int = 0) -> list[str]:
    """``llama_cpp.server``'s command line for the same GGUF and settings as the judge.

    The seed is fixed so that two runs of the baseline ask the same questions
    alike; ragas picks its own temperature.
    """
    args = ["--model", str(model), "--host", "127.0.0.1", "--port", str(port),
            "--model_alias", alias, "--seed", str(seed), "--verbose", "False"]
    if n_ctx:
        args += ["--n_ctx", str(n_ctx)]
    if n_threads:
        args += ["--n_threads", str(n_threads), "--n_threads_batch", str(n_threads)]
    if chat_format:
        args += ["--chat_format", chat_format]
    return args


class ServerProcess:
    """``python -m module args`` (through the launcher), up when ``probe_path`` answers.

    Use as a context manager: ``__enter__`` waits up to ``start_timeout``
    seconds for any HTTP answer on ``url + probe_path`` (raising
    ``ServerError`` with the tail of the server's log when it exits or the
    time runs out) and ``__exit__`` stops the process, whatever happened.
    """

    def __init__(self, module: str, args: Sequence[str], port: int, *,
                 apart: Sequence[str | os.PathLike[str]] = (), start_timeout: float = 300,
                 probe_path: str = "/v1/models") -> None:
        self.module, self.args, self.port = module, list(args), port
        self.apart = [str(a) for a in apart]
        self.start_timeout, self.probe_path = float(start_timeout), probe_path
        self.url = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_s: float | None = None
        self._log = tempfile.TemporaryFile()
        self._old_term: Any = None

    @property
    def command(self) -> list[str]:
        """The command as a user would type it (for the report)."""
        return [sys.executable, "-m", self.module, *self.args]

    def _answers(self) -> bool:
        try:
            urllib.request.urlopen(self.url + self.probe_path, timeout=2).close()
            return True
        except urllib.error.HTTPError:
            return True  # it answered: up, whatever it thinks of the path
        except OSError:
            return False

    def log_tail(self, n: int = 1500) -> str:
        """The last ``n`` characters of the server's stdout and stderr."""
        self._log.flush()
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-n:].strip()

    def start(self) -> str:
        """Start the server and wait until it answers; its base URL."""
        env = {**os.environ, "BENCH_APART_PATH": os.pathsep.join(self.apart)}
        t0 = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, self.module, *self.args],
                                     stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + self.start_timeout
        while not self._answers():
            if self.proc.poll() is not None:
                raise ServerError(f"{self.module} exited with status {self.proc.returncode} "
                                  f"before answering on {self.url}: {self.log_tail()}")
            if time.monotonic() > deadline:
                raise ServerError(f"{self.module} did not answer on {self.url} within "
                                  f"{self.start_timeout:.0f} s: {self.log_tail() or 'no output'}")
            time.sleep(0.2)
        self.started_s = round(time.perf_counter() - t0, 1)
        return self.url

    def stop(self, grace: float = 10) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds; safe to call twice."""
        p, self.proc = self.proc, None
        if p is not None and p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=30)

    def __enter__(self) -> "ServerProcess":
        # A SIGTERM to the benchmark becomes SystemExit, so __exit__ still stops the server.
        if hasattr(signal, "SIGTERM"):
            try:
                self._old_term = signal.signal(signal.SIGTERM, _raise_exit)
            except ValueError:  # not the main thread: the parent watchdog still holds
                self._old_term = None
        try:
            self.start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.stop()
        finally:
            if self._old_term is not None:
                signal.signal(signal.SIGTERM, self._old_term)
                self._old_term = None
            self._log.close()


def _raise_exit(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)

