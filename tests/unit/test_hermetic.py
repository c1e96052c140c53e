"""The test session itself is hermetic: no network beyond loopback, no hub."""

from __future__ import annotations

import os
import socket

import pytest

from conftest import NetworkBlocked


def test_network_is_blocked():
    with pytest.raises(NetworkBlocked):
        socket.create_connection(("203.0.113.1", 80), timeout=1)
    s = socket.socket()
    with pytest.raises(NetworkBlocked):
        s.connect(("198.51.100.7", 443))
    s.close()


def test_hub_is_offline():
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
