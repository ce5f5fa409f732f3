"""ssl.principal.mapping.rules as Kafka's SslPrincipalMapper parses and applies them (cases from its tests)."""

import pytest

from groupcoord.coordinator.security.principal_mapper import NoMatchingRule, SslPrincipalMapper, parse_rules
from groupcoord.coordinator.security.tls import subject_dn


@pytest.mark.parametrize("rules", [
    "DEFAULT",
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
    "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L",
    "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
    "RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
])
def test_valid_rules_parse(rules):
    assert parse_rules(rules)


@pytest.mark.parametrize("rules", ["default", "DEFAUL", "DEFAULT/L", "RULE:/", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1",
                                   "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/LU", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U"])
def test_invalid_rules_are_refused(rules):
    with pytest.raises(ValueError):
        parse_rules(rules)


def test_rules_apply_in_order_with_case_and_back_references():
    mapper = SslPrincipalMapper("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,"
                                "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,"
                                "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U,DEFAULT")
    assert mapper.name("CN=Duke,OU=ServiceUsers,O=Org,C=US") == "Duke"
    assert mapper.name("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US") == "duke@sme"
    assert mapper.name("cn=duke,ou=JavaSoft,o=Sun Microsystems") == "DUKE"
    assert mapper.name("OU=JavaSoft,O=Sun Microsystems,C=US") == "OU=JavaSoft,O=Sun Microsystems,C=US"


def test_no_matching_rule_fails():
    with pytest.raises(NoMatchingRule):
        SslPrincipalMapper("RULE:^CN=(.*)$/$1/").name("OU=x")


def test_a_back_reference_past_the_last_group_is_literal():
    assert SslPrincipalMapper("RULE:^CN=(.*?),.*$/$1-$2/").name("CN=a,OU=b") == "a-$2"


def test_peer_certificate_subject_as_rfc_2253():
    peercert = {"subject": ((("countryName", "GB"),), (("organizationName", "Acme, Ltd"),),
                            (("organizationalUnitName", "eng"),), (("commonName", "alice"),))}
    assert subject_dn(peercert) == "CN=alice,OU=eng,O=Acme\\, Ltd,C=GB"
    assert subject_dn(None) is None and subject_dn({}) is None
