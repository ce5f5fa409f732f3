"""Kafka's security settings carried over: listeners, the protocol map, per-listener overrides, JAAS lines,
client properties files — and secrets never shown."""

import pytest

from groupcoord.coordinator.admin.client_security import ClientConfigError, ClientSecurity, read_properties
from groupcoord.coordinator.config import BrokerConfig, load_toml, resolve
from groupcoord.coordinator.security.jaas import client_login, parse_jaas_config, plain_users
from groupcoord.coordinator.server.listeners import SecurityProtocol, configured_listeners

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_alice="al\\"ice";')


def test_named_listeners_with_the_protocol_map_and_advertised_addresses():
    cfg = BrokerConfig().replace(listeners="INTERNAL://127.0.0.1:9092,sasl_ssl://0.0.0.0:9093,EXTERNAL://:9094",
                                 advertised_listeners="SASL_SSL://broker.example:19093",
                                 listener_security_protocol_map="INTERNAL:PLAINTEXT,EXTERNAL:SSL,SASL_SSL:SASL_SSL",
                                 inter_broker_listener_name="INTERNAL")
    listeners = configured_listeners(cfg)
    assert [(l.name, l.protocol, l.host, l.port) for l in listeners] == [
        ("INTERNAL", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092), ("SASL_SSL", SecurityProtocol.SASL_SSL, "0.0.0.0", 9093),
        ("EXTERNAL", SecurityProtocol.SSL, "", 9094)]
    assert (listeners[1].advertised_host, listeners[1].advertised_port) == ("broker.example", 19093)
    assert listeners[0].advertised_host == "127.0.0.1"


@pytest.mark.parametrize("changes", [
    {"listeners": "PLAINTEXT://127.0.0.1:9092,PLAINTEXT://127.0.0.1:9093"},
    {"listeners": "FOO://127.0.0.1:9092"},
    {"listeners": "PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9092"},
    {"listeners": "PLAINTEXT://127.0.0.1:9092", "advertised_listeners": "SSL://x:1"},
    {"listeners": "PLAINTEXT://127.0.0.1:9092", "inter_broker_listener_name": "SSL"},
    {"listeners": "PLAINTEXT:/127.0.0.1:9092"},
])
def test_listener_mistakes_are_refused(changes):
    with pytest.raises(ValueError):
        configured_listeners(BrokerConfig().replace(**changes))


def test_without_listeners_the_listen_flag_keeps_working():
    [listener] = configured_listeners(BrokerConfig().replace(listen="127.0.0.1:7000", advertised="h:7001"))
    assert (listener.name, listener.port, listener.advertised_host, listener.advertised_port) == ("PLAINTEXT", 7000, "h", 7001)


def test_toml_takes_kafkas_names_and_listener_prefixed_keys(tmp_path):
    path = tmp_path / "groupcoord.toml"
    path.write_text('listeners = "SASL_SSL://127.0.0.1:9093"\n"sasl.enabled.mechanisms" = "SCRAM-SHA-512"\n'
                    '"ssl.keystore.location" = "/k.pem"\n"connections.max.reauth.ms" = 60000\n'
                    f'"listener.name.sasl_ssl.plain.sasl.jaas.config" = \'{JAAS}\'\n')
    cfg = resolve(config_file=path, env={})
    assert cfg.sasl_enabled_mechanisms == "SCRAM-SHA-512" and cfg.connections_max_reauth_ms == 60000
    assert plain_users(cfg.listener_setting("SASL_SSL", "sasl.jaas.config", "PLAIN")) == {"admin": "admin-secret",
                                                                                         'alice': 'al"ice'}
    assert "admin-secret" not in repr(cfg)  # secrets are [hidden] in every repr
    assert load_toml(path)["override"]


def test_listener_setting_prefers_the_listener_then_the_broker_setting():
    cfg = resolve(flags={"override": ["listener.name.ssl.ssl.client.auth=required"], "ssl_client_auth": "requested"}, env={})
    assert cfg.listener_setting("SSL", "ssl.client.auth") == "required"
    assert cfg.listener_setting("SASL_SSL", "ssl.client.auth") == "requested"


def test_jaas_parsing():
    [module] = parse_jaas_config(JAAS)
    assert module.name.endswith("PlainLoginModule") and module.flag == "required"
    assert client_login(JAAS) == ("admin", "admin-secret")
    assert "admin-secret" not in repr(module)
    for bad in ("", "Module required", "Module bogus a=b;", 'Module required a="b"'):
        with pytest.raises(ValueError):
            parse_jaas_config(bad)


def test_client_properties_as_kafkas_tools_read_them(tmp_path):
    text = ("# comment\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
            '    username="alice" \\\n    password="pw";\n')
    props = read_properties(text)
    security = ClientSecurity.from_properties(props)
    assert (security.protocol, security.mechanism, security.username, security.password) == (
        "SASL_PLAINTEXT", "SCRAM-SHA-512", "alice", "pw")
    assert "pw" not in repr(security)
    with pytest.raises(ClientConfigError):
        ClientSecurity.from_properties({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"})
    with pytest.raises(ClientConfigError):
        ClientSecurity.from_properties({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"})


def test_a_kafka_server_properties_security_section_carries_over(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text(
        "# the security section of a Kafka broker's server.properties, unchanged\n"
        "listeners=PLAINTEXT://127.0.0.1:9092,SASL_SSL://0.0.0.0:9093\n"
        "advertised.listeners=PLAINTEXT://127.0.0.1:9092,SASL_SSL://broker.example:9093\n"
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL\n"
        "inter.broker.listener.name=PLAINTEXT\n"
        "security.inter.broker.protocol=PLAINTEXT\n"
        "sasl.mechanism.inter.broker.protocol=PLAIN\n"
        "sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN\n"
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;\n"
        "listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n"
        '    username="admin" password="admin-secret" \\\n'
        '    user_admin="admin-secret";\n'
        "ssl.keystore.type=PEM\n"
        "ssl.keystore.location=/etc/kafka/broker.pem\n"
        "ssl.truststore.type=PEM\n"
        "ssl.truststore.location=/etc/kafka/ca.pem\n"
        "ssl.client.auth=requested\n"
        "ssl.endpoint.identification.algorithm=\n"
        "ssl.principal.mapping.rules=RULE:^CN=([^,]*),.*$/$1/L,DEFAULT\n"
        "connections.max.reauth.ms=3600000\n")
    cfg = resolve(config_file=path, env={})
    listeners = configured_listeners(cfg)
    assert [(l.name, l.protocol.value, l.advertised_host) for l in listeners] == [
        ("PLAINTEXT", "PLAINTEXT", "127.0.0.1"), ("SASL_SSL", "SASL_SSL", "broker.example")]
    assert plain_users(cfg.listener_setting("SASL_SSL", "sasl.jaas.config", "PLAIN")) == {"admin": "admin-secret"}
    assert cfg.ssl_principal_mapping_rules == "RULE:^CN=([^,]*),.*$/$1/L,DEFAULT"
    assert cfg.connections_max_reauth_ms == 3600000 and cfg.ssl_client_auth == "requested"


def test_reauthentication_lifetime_per_listener_and_mechanism():
    from groupcoord.coordinator.security.credentials import CredentialStore
    from groupcoord.coordinator.server import listener_security

    cfg = resolve(flags={"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "connections_max_reauth_ms": "1000",
                         "sasl_enabled_mechanisms": "PLAIN,SCRAM-SHA-512",
                         "override": ["listener.name.sasl_plaintext.scram-sha-512.connections.max.reauth.ms=5000"]},
                  env={})
    [listener] = configured_listeners(cfg)
    sasl = listener_security.build(cfg, listener, CredentialStore.in_memory()).sasl
    assert sasl.reauth_ms_by_mechanism == {"PLAIN": 1000, "SCRAM-SHA-512": 5000}
