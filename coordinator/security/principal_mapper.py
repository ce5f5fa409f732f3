"""``ssl.principal.mapping.rules`` parsed and applied as Kafka's SslPrincipalMapper does.

Rules are a comma-separated list of ``RULE:pattern/replacement/[LU]`` and ``DEFAULT``; the first rule whose
pattern matches the whole distinguished name (RFC 2253, e.g. ``CN=alice,OU=eng,O=Acme,C=GB``) gives the
principal name (``$1`` back references; ``/L`` lower-cases, ``/U`` upper-cases); ``DEFAULT`` gives the
name unchanged. No matching rule fails the connection (Kafka's NoMatchingRule). Java's replacement syntax is
translated to Python's, with Kafka's treatment of back references past the last group as literal text.
"""

from __future__ import annotations

import re

from groupcoord.protocol.frozen import frozen_dataclass

_RULE = r"(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(?:,\s*|$)")
_PARSER = re.compile(_RULE)


class NoMatchingRule(ValueError):
    pass


def _python_replacement(java: str, groups: int) -> str:
    """Java's Matcher replacement (``$n`` groups, ``\\x`` literal x) as a Python ``re.sub`` template."""
    out: list[str] = []
    i = 0
    while i < len(java):
        c = java[i]
        if c == "\\" and i + 1 < len(java):
            nxt = java[i + 1]
            out.append("\\\\" if nxt == "\\" else nxt)
            i += 2
            continue
        if c == "$" and i + 1 < len(java) and java[i + 1].isdigit():
            j = i + 1
            number = int(java[j])
            if number > groups:  # Kafka escapes it: a literal "$n"
                out.append("$")
                i += 1
                continue
            j += 1
            while j < len(java) and java[j].isdigit() and number * 10 + int(java[j]) <= groups:
                number = number * 10 + int(java[j])
                j += 1
            out.append(f"\\g<{number}>")
            i = j
            continue
        out.append("\\\\" if c == "\\" else c)
        i += 1
    return "".join(out)


@frozen_dataclass(slots=False)
class Rule:
    pattern: re.Pattern[str] | None = None  # None: DEFAULT
    replacement: str = ""
    lower: bool = False
    upper: bool = False

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        result = self.pattern.sub(_python_replacement(self.replacement, self.pattern.groups), dn)
        if self.lower:
            return result.lower()
        if self.upper:
            return result.upper()
        return result


class SslPrincipalMapper:
    def __init__(self, rules: str | None = "DEFAULT") -> None:
        self.rules = parse_rules("DEFAULT" if rules is None else rules)

    def name(self, dn: str) -> str:
        for rule in self.rules:
            name = rule.apply(dn)
            if name is not None:
                return name
        raise NoMatchingRule(f"No rules apply to {dn}")


def parse_rules(text: str) -> list[Rule]:
    rules: list[Rule] = []
    text = text.strip()
    pos = 0
    pieces: list[str] = []
    while pos <= len(text):
        m = _SPLITTER.match(text, pos)
        if m is None:
            break
        pieces.append(m.group(1))
        if m.end() == pos:  # an empty match at the end
            break
        pos = m.end()
    for piece in pieces:
        m = _PARSER.match(piece)
        if m is None:
            raise ValueError(f"Invalid rule: {piece}")
        if m.end() != len(piece):
            raise ValueError(f"Invalid rule: `{piece}`, unmatched substring: `{piece[m.end():]}`")
        if m.group(1) is not None:
            rules.append(Rule())
        elif m.group(2) is not None:
            try:
                pattern = re.compile(m.group(2))
            except re.error as exc:
                raise ValueError(f"Invalid rule: {piece}: {exc}") from None
            rules.append(Rule(pattern, m.group(3), m.group(4) == "L", m.group(4) == "U"))
        elif m.group(5):
            raise ValueError(f"Invalid rule: {piece}")
    return rules
