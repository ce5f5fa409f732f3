"""The listening socket's host goes to getaddrinfo as the bytes the idna codec would make of it (acceptor.py makes
them for ASCII names, so the daemon's start does not import the codec), or as the name itself otherwise."""

from __future__ import annotations

import pytest

from groupcoord.coordinator.server.acceptor import _ascii_host


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "broker.example.", "::1", "0.0.0.0", "a" * 63 + ".b",
                                  "x-y_z.EXAMPLE.com"])
def test_an_ascii_name_is_what_the_idna_codec_makes_of_it(host):
    assert _ascii_host(host) == host.encode("idna")


@pytest.mark.parametrize("host", ["a..b", "a" * 64 + ".b", "b." + "a" * 64, ".a", "bücher.example"])
def test_any_other_name_is_left_to_the_codec(host):
    assert _ascii_host(host) == host


def test_no_host_is_no_host():
    assert (_ascii_host("") or None) is None
