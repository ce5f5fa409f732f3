"""The TLS context a listener gets from Kafka's PEM settings, and the mistakes refused at start."""

import ssl

import pytest
from cryptography.hazmat.primitives import serialization

from groupcoord.coordinator.security.tls import TlsConfigError, TlsSettings, server_context
from tests.support.certs import make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


def test_a_keystore_file_with_key_and_chain(pki):
    ctx = server_context(TlsSettings(keystore_location=str(pki.broker.combined)))
    assert ctx.minimum_version == ssl.TLSVersion.TLSv1_2 and ctx.verify_mode == ssl.CERT_NONE


def test_inline_pem_and_an_encrypted_key(pki, tmp_path):
    key = serialization.load_pem_private_key(pki.broker.key.read_bytes(), None)
    encrypted = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.BestAvailableEncryption(b"key-pass")).decode()
    chain = pki.broker.cert.read_text()
    ctx = server_context(TlsSettings(keystore_key=encrypted, keystore_certificate_chain=chain, key_password="key-pass",
                                     truststore_certificates=pki.ca.read_text(), client_auth="required"))
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    with pytest.raises(TlsConfigError):
        server_context(TlsSettings(keystore_key=encrypted, keystore_certificate_chain=chain, key_password="wrong"))


@pytest.mark.parametrize("settings", [
    TlsSettings(),                                                    # no key at all
    TlsSettings(keystore_location="/nonexistent.pem"),
    TlsSettings(keystore_type="JKS"),
    TlsSettings(client_auth="always"),
    TlsSettings(enabled_protocols="TLSv1.1,TLSv1.2"),
])
def test_mistakes_are_refused_at_start(settings, pki):
    with pytest.raises(TlsConfigError):
        server_context(settings)


def test_client_auth_without_a_truststore_is_refused(pki):
    with pytest.raises(TlsConfigError):
        server_context(TlsSettings(keystore_location=str(pki.broker.combined), client_auth="requested"))
