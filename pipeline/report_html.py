"""A self-contained HTML page: tables and base64-embedded PNG figures, no external assets.

One file that can be mailed or attached to a ticket and opened anywhere.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f3f3f3}
.note{color:#666;font-size:13px}
.bad{color:#b00020;font-weight:bold}
"""


@dataclass
class Section:
    title: str
    parts: list[str] = field(default_factory=list)

    def paragraph(self, text: str, css_class: str = "") -> "Section":
        attr = f' class="{css_class}"' if css_class else ""
        self.parts.append(f"<p{attr}>{html.escape(text)}</p>")
        return self

    def image(self, png: bytes, alt: str) -> "Section":
        data = base64.b64encode(png).decode("ascii")
        self.parts.append(f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">')
        return self

    def table(self, rows: list[dict], columns: list[str], limit: int = 50) -> "Section":
        head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_cell(row.get(c)))}</td>" for c in columns) + "</tr>"
            for row in rows[:limit]
        )
        self.parts.append(f"<table><tr>{head}</tr>{body}</table>")
        if len(rows) > limit:
            self.paragraph(f"{len(rows) - limit} more rows in the CSV output.", "note")
        return self


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def render(title: str, sections: list[Section]) -> str:
    body = "".join(
        f"<h2>{html.escape(section.title)}</h2>" + "".join(section.parts) for section in sections
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>"
    )
