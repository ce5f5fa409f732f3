"""``sasl.jaas.config`` values as Kafka reads them (JaasConfig): ``<LoginModule> <flag> key="value" ...;``.

Used on both sides: the broker's ``listener.name.<listener>.plain.sasl.jaas.config`` (PlainLoginModule's
``user_<name>="<password>"`` entries are the PLAIN users, as Kafka's PlainServerCallbackHandler reads them),
and the admin client's ``sasl.jaas.config`` (``username``/``password`` of PlainLoginModule or ScramLoginModule).
"""

from __future__ import annotations

import re
from dataclasses import field

from groupcoord.protocol.frozen import frozen_dataclass

_FLAGS = {"required", "requisite", "sufficient", "optional"}
_TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([^\s=;"]+)|(=)|(;))')


@frozen_dataclass(slots=False)
class LoginModule:
    name: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:  # options hold passwords: never shown
        return f"LoginModule({self.name!r}, {self.flag!r}, options={sorted(self.options)})"


def parse_jaas_config(text: str) -> list[LoginModule]:
    """Every login module in ``text``. Raises ValueError (without echoing the text: it holds secrets)."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise ValueError(f"sasl.jaas.config: unexpected character at position {pos}")
        pos = m.end()
        if m.group(1) is not None:
            tokens.append(("str", re.sub(r"\\(.)", r"\1", m.group(1))))
        elif m.group(2) is not None:
            tokens.append(("word", m.group(2)))
        elif m.group(3):
            tokens.append(("=", "="))
        else:
            tokens.append((";", ";"))
    modules: list[LoginModule] = []
    i = 0
    while i < len(tokens):
        if tokens[i][0] != "word" or i + 1 >= len(tokens) or tokens[i + 1][1].lower() not in _FLAGS:
            raise ValueError("sasl.jaas.config: expected '<LoginModule> <required|requisite|sufficient|optional>'")
        name, flag = tokens[i][1], tokens[i + 1][1].lower()
        i += 2
        options: dict[str, str] = {}
        while i < len(tokens) and tokens[i][0] != ";":
            if i + 2 >= len(tokens) or tokens[i][0] != "word" or tokens[i + 1][0] != "=" or tokens[i + 2][0] not in ("str", "word"):
                raise ValueError(f"sasl.jaas.config: expected key=value options in {name}")
            options[tokens[i][1]] = tokens[i + 2][1]
            i += 3
        if i >= len(tokens):
            raise ValueError("sasl.jaas.config: a login module must end with ';'")
        i += 1
        modules.append(LoginModule(name, flag, options))
    if not modules:
        raise ValueError("sasl.jaas.config: no login module")
    return modules


def plain_users(text: str) -> dict[str, str]:
    """PlainLoginModule's ``user_<name>="<password>"`` options."""
    users: dict[str, str] = {}
    for module in parse_jaas_config(text):
        for key, value in module.options.items():
            if key.startswith("user_"):
                users[key[len("user_"):]] = value
    return users


def client_login(text: str) -> tuple[str, str]:
    """The ``username``/``password`` a client authenticates with."""
    for module in parse_jaas_config(text):
        if "username" in module.options and "password" in module.options:
            return module.options["username"], module.options["password"]
    raise ValueError("sasl.jaas.config: no username and password options")
