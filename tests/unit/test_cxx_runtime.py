"""The C++ runtime preloaded before a CUDA llama.cpp (localeval/judge/llama/cxx_runtime.py).

The clash it prevents needs a CUDA build and a GPU (docs/performance.md, "On a
GPU"); what is checked here is the decision: a CPU build is left alone, a
package whose lib folder holds libggml-cuda gets libstdc++ loaded globally.
"""

from __future__ import annotations

import ctypes
import importlib.util
from types import SimpleNamespace

from localeval.judge.llama import cxx_runtime


def test_the_installed_cpu_build_is_left_alone():
    assert cxx_runtime.cuda_build() is False
    assert cxx_runtime.preload_cxx_runtime() is False


def fake_package(tmp_path, monkeypatch, with_cuda: bool):
    pkg = tmp_path / "llama_cpp"
    (pkg / "lib").mkdir(parents=True)
    (pkg / "lib" / "libggml-base.so").write_bytes(b"")
    if with_cuda:
        (pkg / "lib" / "libggml-cuda.so.0").write_bytes(b"")
    real = importlib.util.find_spec

    def find_spec(name, *a, **k):
        if name == "llama_cpp":
            return SimpleNamespace(submodule_search_locations=[str(pkg)])
        return real(name, *a, **k)

    monkeypatch.setattr(cxx_runtime.importlib.util, "find_spec", find_spec)


def test_a_cuda_build_gets_libstdcxx_in_the_global_scope(tmp_path, monkeypatch):
    fake_package(tmp_path, monkeypatch, with_cuda=True)
    loaded = []
    real_cdll = ctypes.CDLL

    def cdll(name, mode=0, *a, **k):
        loaded.append((name, mode))
        return real_cdll(name, mode, *a, **k)

    monkeypatch.setattr(cxx_runtime.ctypes, "CDLL", cdll)
    assert cxx_runtime.cuda_build() is True
    assert cxx_runtime.preload_cxx_runtime() is True
    assert loaded == [("libstdc++.so.6", ctypes.RTLD_GLOBAL)]


def test_no_cuda_backend_or_no_runtime_found_loads_nothing(tmp_path, monkeypatch):
    fake_package(tmp_path, monkeypatch, with_cuda=False)
    assert cxx_runtime.preload_cxx_runtime() is False
    fake_package(tmp_path / "b", monkeypatch, with_cuda=True)
    monkeypatch.setattr(cxx_runtime.ctypes.util, "find_library", lambda name: None)
    assert cxx_runtime.preload_cxx_runtime() is False
