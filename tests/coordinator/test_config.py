"""Settings keep Kafka's names and resolve flag > environment > TOML file > default."""

import subprocess
import sys

import pytest

from groupcoord.coordinator.config import BY_NAME, SETTINGS, Fsync, resolve


def test_every_spelling_is_derived_from_the_kafka_name():
    s = BY_NAME["group.initial.rebalance.delay.ms"]
    assert (s.flag, s.env, s.attr) == (
        "--group-initial-rebalance-delay-ms",
        "GROUPCOORD_GROUP_INITIAL_REBALANCE_DELAY_MS",
        "group_initial_rebalance_delay_ms",
    )


def test_defaults_are_kafkas():
    c = resolve(env={})
    assert c.group_initial_rebalance_delay_ms == 3000
    assert c.offsets_topic_num_partitions == 50
    assert c.group_min_session_timeout_ms == 6000
    assert c.group_max_session_timeout_ms == 1800000
    assert c.offsets_retention_minutes == 10080
    assert c.offset_metadata_max_bytes == 4096
    assert c.auto_create_topics_enable is True
    assert c.num_partitions == 1
    assert c.listen == ("127.0.0.1", 9092)
    assert c.fsync is Fsync.BATCH


def test_flag_beats_env_beats_file_beats_default(tmp_path):
    toml = tmp_path / "groupcoord.toml"
    toml.write_text('"group.max.size" = 10\n"num.partitions" = 4\n"offsets.retention.minutes" = 5\nfsync = "always"\n')
    env = {"GROUPCOORD_GROUP_MAX_SIZE": "20", "GROUPCOORD_NUM_PARTITIONS": "6"}
    c = resolve(flags={"group_max_size": "30"}, env=env, config_file=toml)
    assert c.group_max_size == 30  # flag
    assert c.num_partitions == 6  # env over file
    assert c.offsets_retention_minutes == 5  # file over default
    assert c.fsync is Fsync.ALWAYS
    assert c.group_min_session_timeout_ms == 6000  # default


def test_toml_tables_flatten_to_dotted_names(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text("[group]\nmax.size = 3\n[offsets.topic]\nnum.partitions = 7\n")
    c = resolve(env={}, config_file=toml)
    assert (c.group_max_size, c.offsets_topic_num_partitions) == (3, 7)


def test_unknown_setting_in_a_file_is_an_error_not_ignored(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text('"group.max.sise" = 3\n')
    with pytest.raises(KeyError, match="group.max.sise"):
        resolve(env={}, config_file=toml)


def test_listen_and_advertised_addresses():
    c = resolve(flags={"listen": "0.0.0.0:19092", "advertised": "broker.local:29092"}, env={})
    assert (c.listen_host, c.listen_port, c.advertised_host, c.advertised_port) == ("0.0.0.0", 19092, "broker.local", 29092)


def test_serve_help_lists_every_setting():
    out = subprocess.run([sys.executable, "-m", "groupcoord.coordinator.ops.cli", "serve", "--help"], capture_output=True, text=True, check=True).stdout
    for s in SETTINGS:
        assert s.flag in out, s.flag


def test_max_connections_per_ip_overrides_are_kafkas_host_colon_limit_list():
    from groupcoord.coordinator.config import BrokerConfig

    cfg = BrokerConfig().replace(max_connections_per_ip_overrides="127.0.0.1:5, broker.example:200,[::1]:7")
    assert cfg.max_connections_per_ip_overrides == {"127.0.0.1": 5, "broker.example": 200, "::1": 7}
    with pytest.raises(ValueError, match="max.connections.per.ip.overrides"):
        BrokerConfig().replace(max_connections_per_ip_overrides="127.0.0.1")


def _generated_twin():
    """BrokerConfig's base as the dataclass machinery would generate it (what config.py writes by hand)."""
    import dataclasses
    from typing import Any

    fields = [(s.attr, Any, dataclasses.field(default=s.default)) for s in SETTINGS]
    return dataclasses.make_dataclass("_BrokerConfigBase", fields, frozen=True)


def test_the_config_base_behaves_as_the_generated_dataclass():
    import dataclasses

    from groupcoord.coordinator.config import BrokerConfig

    twin = _generated_twin()
    base = BrokerConfig.__mro__[1]
    changed = {"listen": ("0.0.0.0", 1), "group_max_size": 7, "fsync": Fsync.NEVER}
    for kwargs in ({}, changed):
        ours, theirs = base(**kwargs), twin(**kwargs)
        assert repr(ours) == repr(theirs)
        assert hash(ours) == hash(theirs)
        assert dataclasses.astuple(ours) == dataclasses.astuple(theirs)
    assert base(**changed) == base(**changed) and base(**changed) != base() and base() != twin()
    assert base("h", ("a", 1)) == base(listen="h", advertised=("a", 1))  # by position, as the generated one
    assert [f.name for f in dataclasses.fields(base)] == [f.name for f in dataclasses.fields(twin)]
    assert base.__match_args__ == twin.__match_args__
    config = BrokerConfig().replace(group_max_size="9")
    assert config.group_max_size == 9 and isinstance(config, BrokerConfig)
    assert dataclasses.replace(config, node_id=3) == BrokerConfig(group_max_size=9, node_id=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.node_id = 2
    for bad in (lambda cls: cls(nonsense=1), lambda cls: cls("h", listen="h"), lambda cls: cls(*range(500))):
        with pytest.raises(TypeError) as ours:
            bad(base)
        with pytest.raises(TypeError) as theirs:
            bad(twin)
        assert str(ours.value) == str(theirs.value)
