"""Request readings the APIs share."""

from groupcoord.coordinator.apis.requests import client_host, duplicates
from groupcoord.coordinator.server.dispatch import RequestContext


def ctx(host):
    return RequestContext(11, 9, 1, "c", host, 1)


def test_the_client_host_reads_as_kafka_prints_it():
    assert client_host(ctx("127.0.0.1")) == "/127.0.0.1"
    assert client_host(ctx("/10.0.0.1")) == "/10.0.0.1"
    assert client_host(ctx("")) == ""


def test_duplicates_are_the_names_given_more_than_once():
    assert duplicates(["a", "b", "a", "c", "b", "a"]) == {"a", "b"}
    assert duplicates([]) == set()
