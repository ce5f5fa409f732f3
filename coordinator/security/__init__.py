"""Authentication and authorisation: principals, listeners' security, SASL, TLS and ACLs."""
