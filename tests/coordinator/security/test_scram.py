"""SCRAM maths and messages: the RFC 7677 example exchange, both halves against each other, and refusals."""

from __future__ import annotations

import base64

import pytest

from groupcoord.coordinator.security.sasl_client import SaslClientError, ScramClient
from groupcoord.coordinator.security.sasl_mechanisms import SaslFailure, ScramServer
from groupcoord.coordinator.security.scram import (
    ClientFirst,
    ScramError,
    ScramMechanism,
    sasl_name,
    username,
)

# RFC 7677 section 3: user "user", password "pencil".
CLIENT_NONCE = "rOprNGfwEbeRWgbNEkqO"
SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc_credential():
    return ScramMechanism.SCRAM_SHA_256.new_credential("pencil", 4096, salt=SALT)


def test_the_rfc_7677_exchange_byte_for_byte():
    client = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce=CLIENT_NONCE)
    server = ScramServer(ScramMechanism.SCRAM_SHA_256, lambda u, m: rfc_credential() if u == "user" else None,
                         server_nonce=lambda: SERVER_NONCE)
    first = client.first()
    assert first == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    server_first = server.evaluate(first)
    assert server_first == b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    final = client.respond(server_first)
    assert final == CLIENT_FINAL
    assert server.evaluate(final) == SERVER_FINAL
    assert server.complete and server.authorization_id == "user"
    assert client.respond(SERVER_FINAL) is None and client.complete


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_both_halves_agree_and_a_wrong_password_fails(mechanism):
    scram = ScramMechanism.by_name(mechanism)
    stored = scram.new_credential("s3cret", 4096)
    for password, ok in (("s3cret", True), ("wrong", False)):
        client = ScramClient(mechanism, "al,ice=", password)
        server = ScramServer(scram, lambda u, m: stored if u == "al,ice=" else None)
        final = client.respond(server.evaluate(client.first()))
        if ok:
            client.respond(server.evaluate(final))
            assert client.complete and server.authorization_id == "al,ice="
        else:
            with pytest.raises(SaslFailure) as failure:
                server.evaluate(final)
            assert failure.value.client_message is None  # the generic text: nothing about the user leaks


def test_unknown_user_and_too_few_iterations_fail_at_the_first_message():
    scram = ScramMechanism.SCRAM_SHA_512
    weak = scram.new_credential("pw", 1000)
    with pytest.raises(SaslFailure):
        ScramServer(scram, lambda u, m: None).evaluate(ScramClient("SCRAM-SHA-512", "nobody", "pw").first())
    with pytest.raises(SaslFailure):
        ScramServer(scram, lambda u, m: weak).evaluate(ScramClient("SCRAM-SHA-512", "u", "pw").first())


def test_channel_binding_other_than_n_is_refused():
    scram = ScramMechanism.SCRAM_SHA_256
    with pytest.raises(SaslFailure):
        ScramServer(scram, lambda u, m: rfc_credential()).evaluate(b"y,,n=user,r=abc")
    with pytest.raises(SaslFailure):
        ScramServer(scram, lambda u, m: rfc_credential()).evaluate(b"p=tls-unique,,n=user,r=abc")
    # client-final claiming another gs2 header than the client-first's
    server = ScramServer(scram, lambda u, m: rfc_credential(), server_nonce=lambda: SERVER_NONCE)
    server.evaluate(b"n,,n=user,r=" + CLIENT_NONCE.encode())
    with pytest.raises(SaslFailure):
        server.evaluate(CLIENT_FINAL.replace(b"c=biws", b"c=eSws"))


def test_a_client_checks_the_server_signature_and_nonce():
    client = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce=CLIENT_NONCE)
    client.first()
    with pytest.raises(SaslClientError):
        client.respond(b"r=someoneelse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
    client = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce=CLIENT_NONCE)
    client.respond(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
    with pytest.raises(SaslClientError):
        client.respond(b"v=" + base64.b64encode(b"x" * 32))


def test_extensions_and_reserved_m_are_parsed_as_kafka_does():
    first = ClientFirst.parse(b"n,,m=x,n=bob,r=nonce,tokenauth=false,other=1")
    assert first.saslname == "bob" and first.extensions == {"tokenauth": "false", "other": "1"}
    with pytest.raises(ScramError):
        ClientFirst.parse(b"n,,n=bob")
    with pytest.raises(ScramError):
        ClientFirst.parse(b"\xff\xfe")


def test_saslname_escaping_round_trips_and_refuses_stray_equals():
    assert sasl_name("a=b,c") == "a=3Db=2Cc"
    assert username("a=3Db=2Cc") == "a=b,c"
    with pytest.raises(ScramError):
        username("a=4Fb")
