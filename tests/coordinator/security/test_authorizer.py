"""The StandardAuthorizer's decisions, scenario by scenario, and the ACL set surviving restarts."""

from dataclasses import dataclass

import pytest

from groupcoord.coordinator.security.acl import (
    ANY_FILTER,
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation as Op,
    AclPermissionType as Perm,
    PatternType as PT,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType as RT,
    to_bitfield,
)
from groupcoord.coordinator.security.acl_store import ACL_FILE, AclStore
from groupcoord.coordinator.security.authorizer import Authorizer, authorizer_from_config, parse_super_users
from groupcoord.coordinator.security.principal import KafkaPrincipal


@dataclass
class Ctx:
    principal: KafkaPrincipal
    client_host: str = "127.0.0.1"
    api_key: int = 12


def ctx(name: str, host: str = "127.0.0.1") -> Ctx:
    return Ctx(KafkaPrincipal("User", name), host)


def acl(rtype, name, op, principal="User:alice", perm=Perm.ALLOW, pattern=PT.LITERAL, host="*") -> AclBinding:
    return AclBinding(ResourcePattern(rtype, name, pattern), AccessControlEntry(principal, host, op, perm))


def authorizer(*bindings, super_users=(), allow_if_no_acl=False, data_dir=None) -> Authorizer:
    auth = Authorizer(AclStore(data_dir), super_users, allow_if_no_acl)
    auth.create_acls(bindings)
    return auth


def test_a_literal_allow_allows_exactly_that_resource_and_operation():
    auth = authorizer(acl(RT.TOPIC, "orders", Op.READ))
    assert auth.authorize(ctx("alice"), Op.READ, RT.TOPIC, "orders")
    assert not auth.authorize(ctx("alice"), Op.WRITE, RT.TOPIC, "orders")
    assert not auth.authorize(ctx("alice"), Op.READ, RT.TOPIC, "orders2")
    assert not auth.authorize(ctx("bob"), Op.READ, RT.TOPIC, "orders")
    assert not auth.authorize(ctx("alice"), Op.READ, RT.GROUP, "orders")


def test_read_write_delete_alter_imply_describe_and_alter_configs_implies_describe_configs():
    for op in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER):
        assert authorizer(acl(RT.TOPIC, "t", op)).authorize(ctx("alice"), Op.DESCRIBE, RT.TOPIC, "t"), op
    assert not authorizer(acl(RT.TOPIC, "t", Op.CREATE)).authorize(ctx("alice"), Op.DESCRIBE, RT.TOPIC, "t")
    assert authorizer(acl(RT.TOPIC, "t", Op.ALTER_CONFIGS)).authorize(ctx("alice"), Op.DESCRIBE_CONFIGS, RT.TOPIC, "t")
    assert not authorizer(acl(RT.TOPIC, "t", Op.DESCRIBE)).authorize(ctx("alice"), Op.DESCRIBE_CONFIGS, RT.TOPIC, "t")


def test_a_deny_implies_nothing_but_wins_over_any_allow():
    auth = authorizer(acl(RT.TOPIC, "t", Op.ALL), acl(RT.TOPIC, "t", Op.READ, perm=Perm.DENY))
    assert not auth.authorize(ctx("alice"), Op.READ, RT.TOPIC, "t")
    assert auth.authorize(ctx("alice"), Op.DESCRIBE, RT.TOPIC, "t")  # DENY READ does not deny DESCRIBE
    assert auth.authorize(ctx("alice"), Op.WRITE, RT.TOPIC, "t")
    everything_denied = authorizer(acl(RT.TOPIC, "t", Op.READ), acl(RT.TOPIC, "*", Op.ALL, perm=Perm.DENY))
    assert not everything_denied.authorize(ctx("alice"), Op.READ, RT.TOPIC, "t")


def test_prefixes_wildcard_resource_and_wildcard_principal():
    auth = authorizer(acl(RT.TOPIC, "pay", Op.WRITE, pattern=PT.PREFIXED),
                      acl(RT.GROUP, "*", Op.READ, principal="User:*"),
                      acl(RT.TOPIC, "payroll", Op.WRITE, perm=Perm.DENY, pattern=PT.PREFIXED))
    assert auth.authorize(ctx("alice"), Op.WRITE, RT.TOPIC, "payments")
    assert auth.authorize(ctx("alice"), Op.WRITE, RT.TOPIC, "pay")
    assert not auth.authorize(ctx("alice"), Op.WRITE, RT.TOPIC, "payroll-2026")
    assert not auth.authorize(ctx("alice"), Op.WRITE, RT.TOPIC, "pa")
    assert auth.authorize(ctx("anyone"), Op.READ, RT.GROUP, "any-group")
    # a literal ACL whose name is only a prefix of the resource does not cover it
    assert not authorizer(acl(RT.TOPIC, "pay", Op.WRITE)).authorize(ctx("alice"), Op.WRITE, RT.TOPIC, "payments")


def test_host_matching():
    auth = authorizer(acl(RT.GROUP, "g", Op.READ, host="10.0.0.1"))
    assert auth.authorize(ctx("alice", "10.0.0.1"), Op.READ, RT.GROUP, "g")
    assert auth.authorize(ctx("alice", "/10.0.0.1"), Op.READ, RT.GROUP, "g")
    assert not auth.authorize(ctx("alice", "10.0.0.2"), Op.READ, RT.GROUP, "g")


def test_super_users_may_do_anything_even_against_a_deny():
    auth = authorizer(acl(RT.TOPIC, "*", Op.ALL, principal="User:*", perm=Perm.DENY),
                      super_users=parse_super_users(" User:admin ; User:ops;"))
    assert auth.super_users == {"User:admin", "User:ops"}
    assert auth.authorize(ctx("admin"), Op.DELETE, RT.TOPIC, "t")
    assert not auth.authorize(ctx("alice"), Op.DESCRIBE, RT.TOPIC, "t")
    with pytest.raises(ValueError):
        parse_super_users("admin")


def test_allow_everyone_if_no_acl_found_only_where_no_acl_covers_the_resource():
    auth = authorizer(acl(RT.TOPIC, "guarded", Op.READ, principal="User:bob"), allow_if_no_acl=True)
    assert auth.authorize(ctx("alice"), Op.WRITE, RT.TOPIC, "open")
    assert not auth.authorize(ctx("alice"), Op.READ, RT.TOPIC, "guarded")  # covered, but not for alice
    assert not authorizer().authorize(ctx("alice"), Op.WRITE, RT.TOPIC, "open")  # Kafka's default: deny


def test_authorized_operations_bitfield():
    auth = authorizer(acl(RT.GROUP, "g", Op.READ))
    assert auth.authorized_operations(ctx("alice"), RT.GROUP, "g") == to_bitfield({Op.READ, Op.DESCRIBE})
    assert auth.authorized_operations(ctx("bob"), RT.GROUP, "g") == 0
    assert authorizer(super_users={"User:root"}).authorized_operations(ctx("root"), RT.GROUP, "g") == \
        to_bitfield({Op.READ, Op.DESCRIBE, Op.DELETE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS})


def test_authorize_by_resource_type_as_kafka_s_default_implementation():
    c = ctx("alice")
    assert not authorizer().authorize_by_resource_type(c, Op.WRITE, RT.TOPIC)
    assert authorizer(acl(RT.TOPIC, "t", Op.WRITE)).authorize_by_resource_type(c, Op.WRITE, RT.TOPIC)
    dominated = authorizer(acl(RT.TOPIC, "pay-x", Op.WRITE), acl(RT.TOPIC, "pay", Op.WRITE, perm=Perm.DENY, pattern=PT.PREFIXED))
    assert not dominated.authorize_by_resource_type(c, Op.WRITE, RT.TOPIC)
    assert not authorizer(acl(RT.TOPIC, "t", Op.WRITE), acl(RT.TOPIC, "t", Op.WRITE, perm=Perm.DENY)
                          ).authorize_by_resource_type(c, Op.WRITE, RT.TOPIC)
    assert authorizer(allow_if_no_acl=True).authorize_by_resource_type(c, Op.WRITE, RT.TOPIC)


def test_filters_select_as_kafka_s_match_any_and_exact_patterns():
    bindings = [acl(RT.TOPIC, "orders", Op.READ), acl(RT.TOPIC, "*", Op.READ), acl(RT.TOPIC, "ord", Op.READ, pattern=PT.PREFIXED),
                acl(RT.TOPIC, "other", Op.READ), acl(RT.GROUP, "orders", Op.READ, principal="User:bob")]
    auth = authorizer(*bindings)

    def names(rtype, name, pattern, principal=None):
        flt = AclBindingFilter(ResourcePatternFilter(rtype, name, pattern),
                               AccessControlEntryFilter(principal, None, Op.ANY, Perm.ANY))
        return sorted((b.pattern.name, b.pattern.pattern_type.name) for b in auth.acls(flt))

    assert names(RT.TOPIC, "orders", PT.MATCH) == [("*", "LITERAL"), ("ord", "PREFIXED"), ("orders", "LITERAL")]
    assert names(RT.TOPIC, "orders", PT.LITERAL) == [("orders", "LITERAL")]
    assert names(RT.TOPIC, "ord", PT.ANY) == [("ord", "PREFIXED")]
    assert names(RT.ANY, None, PT.ANY, "User:bob") == [("orders", "LITERAL")]
    assert len(auth.acls(ANY_FILTER)) == 5


def test_the_acl_set_is_persisted_reloaded_and_deduplicated(tmp_path):
    auth = authorizer(acl(RT.GROUP, "g", Op.READ), acl(RT.GROUP, "g", Op.READ), data_dir=tmp_path)
    auth.create_acls([acl(RT.TOPIC, "t", Op.WRITE, perm=Perm.DENY, pattern=PT.PREFIXED)])
    assert len(auth.acls(ANY_FILTER)) == 2
    (tmp_path / (ACL_FILE + ".tmp")).write_text("{ half written")  # a crash mid-write leaves this behind
    again = Authorizer(AclStore(tmp_path))
    assert set(again.acls(ANY_FILTER)) == set(auth.acls(ANY_FILTER))
    assert again.authorize(ctx("alice"), Op.READ, RT.GROUP, "g")
    removed = again.delete_acls([AclBindingFilter(ResourcePatternFilter(RT.GROUP, None, PT.ANY),
                                                  AccessControlEntryFilter(None, None, Op.ANY, Perm.ANY))])
    assert [len(r) for r in removed] == [1]
    assert len(Authorizer(AclStore(tmp_path)).acls(ANY_FILTER)) == 1


def test_configured_only_by_kafka_s_authorizer_names(tmp_path):
    @dataclass
    class Cfg:
        authorizer_class_name: str = ""
        super_users: str = ""
        allow_everyone_if_no_acl_found: bool = False

    assert authorizer_from_config(Cfg(), tmp_path) is None
    auth = authorizer_from_config(Cfg("org.apache.kafka.metadata.authorizer.StandardAuthorizer", "User:a", True), tmp_path)
    assert auth.super_users == {"User:a"} and auth.allow_if_no_acl
    assert authorizer_from_config(Cfg("kafka.security.authorizer.AclAuthorizer"), tmp_path) is not None
    with pytest.raises(ValueError):
        authorizer_from_config(Cfg("com.example.MyAuthorizer"), tmp_path)


def test_denials_are_counted_per_api_and_logged_once_per_quiet_spell():
    seen = []

    class Observer:
        def on_authorization_denied(self, api):
            seen.append(api)

    now = [0.0]
    auth = Authorizer(AclStore(None), observer=Observer(), clock=lambda: now[0])
    for _ in range(1000):
        auth.authorize(ctx("mallory"), Op.READ, RT.GROUP, "g")
    assert seen == ["Heartbeat"] * 1000
    assert list(auth._last_logged.values()) == [[0.0, 999]]
    now[0] = 60.0
    auth.authorize(ctx("mallory"), Op.READ, RT.GROUP, "g")
    assert list(auth._last_logged.values()) == [[60.0, 0]]
    auth.authorize(ctx("mallory"), Op.DESCRIBE, RT.GROUP, "g", log_if_denied=False)
    assert len(seen) == 1001


def test_a_failed_write_changes_nothing(tmp_path, monkeypatch):
    auth = authorizer(acl(RT.GROUP, "g", Op.READ), data_dir=tmp_path)
    assert auth.authorize(ctx("alice"), Op.READ, RT.GROUP, "g")

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("groupcoord.coordinator.security.acl_store.os.replace", full_disk)
    with pytest.raises(OSError):
        auth.create_acls([acl(RT.GROUP, "g", Op.READ, perm=Perm.DENY)])
    assert auth.authorize(ctx("alice"), Op.READ, RT.GROUP, "g")  # the refused change is not served either
    assert len(auth.acls(ANY_FILTER)) == 1


def test_remembered_decisions_follow_acl_changes():
    auth = authorizer()
    assert not auth.authorize(ctx("alice"), Op.READ, RT.GROUP, "g")
    auth.create_acls([acl(RT.GROUP, "g", Op.READ)])
    assert auth.authorize(ctx("alice"), Op.READ, RT.GROUP, "g")
    auth.delete_acls([ANY_FILTER])
    assert not auth.authorize(ctx("alice"), Op.READ, RT.GROUP, "g")


def test_the_settings_are_refused_when_read_not_when_first_used():
    from groupcoord.coordinator.config import BrokerConfig

    with pytest.raises(ValueError, match="not supported"):
        BrokerConfig().replace(authorizer_class_name="com.example.MyAuthorizer")
    with pytest.raises(ValueError, match="Type:name"):
        BrokerConfig().replace(super_users="User:admin;ops")
    cfg = BrokerConfig().replace(authorizer_class_name=" kafka.security.authorizer.AclAuthorizer ",
                                 super_users="User:admin; User:ops", allow_everyone_if_no_acl_found="true")
    assert (cfg.authorizer_class_name, cfg.allow_everyone_if_no_acl_found) == ("kafka.security.authorizer.AclAuthorizer", True)
