"""The llama-cpp-python version fence reads its range as pip does (no model, no llama_cpp call).

``compat.check_version`` used to compare three numbers, so it let in a
pre-release (0.3.37rc1, 0.3.40.dev2) that ``pip install
'llama-cpp-python>=0.3.36,<0.4.0'`` would never have installed.
"""

from __future__ import annotations

import pytest

from localeval.errors import ModelError
from localeval.judge.llama import compat


@pytest.fixture(autouse=True)
def _forget_checked(monkeypatch):
    monkeypatch.setattr(compat, "_checked", set())
    monkeypatch.delenv(compat.ALLOW_ENV, raising=False)


@pytest.mark.parametrize("version", ["0.3.36", "0.3.37", "0.3.99", "0.3.36+cu124", "0.3.36.post1"])
def test_releases_in_the_range_are_accepted(version):
    compat.check_version(version)
    assert compat.version_supported(version)


@pytest.mark.parametrize("version", [
    "0.3.37rc1", "0.3.40.dev2", "0.3.38a1", "0.3.38b2",  # pre-releases inside the numbers
    "0.4.0rc1", "0.3.36rc1", "0.3.36.dev0",              # pre-releases at the ends
    "0.4.0", "0.3.35", "1.0.0", "dev", "", "0.3",        # outside, or not a version
])
def test_pre_releases_and_others_are_refused_as_pip_would(version):
    with pytest.raises(ModelError) as e:
        compat.check_version(version)
    assert e.value.exit_code == 3
    assert f"llama-cpp-python {version} is installed" in str(e.value)
    assert not compat.version_supported(version)


def test_the_range_is_a_pip_specifier_that_names_no_pre_release():
    from packaging.specifiers import SpecifierSet

    spec = SpecifierSet(compat.supported_text())
    assert not spec.prereleases  # so no pre-release is in it (pip without --pre)
    for v in ("0.3.36", "0.3.37rc1", "0.4.0", "0.3.36+local"):
        assert compat.version_supported(v) == spec.contains(v, prereleases=False)
