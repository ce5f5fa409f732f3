"""Java ``.properties`` text as Kafka reads its ``server.properties`` and its tools' ``--command-config``:
``key=value`` or ``key: value``, ``#``/``!`` comments, a trailing ``\\`` continuing the line (JAAS lines)."""

from __future__ import annotations


def read_properties(text: str) -> dict[str, str]:
    props: dict[str, str] = {}
    logical: list[str] = []
    for raw in text.splitlines():
        line = raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical.append(line[:-1])
            continue
        logical.append(line)
        entry = "".join(logical)
        logical = []
        seps = [p for p in (entry.find("="), entry.find(":")) if p >= 0]
        if not seps:
            props[entry.strip()] = ""
            continue
        cut = min(seps)
        props[entry[:cut].strip()] = entry[cut + 1:].strip()
    if logical:
        entry = "".join(logical)
        key, _, value = entry.partition("=")
        props[key.strip()] = value.strip()
    return props
