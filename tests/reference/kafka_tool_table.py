"""The table of every Kafka tool command the tool tests ran, with its outcome on groupcoord and on Kafka 4.3.1.

The tool tests (test_kafka_tools.py, test_mirror_maker.py) record into ``TABLE`` as they run: each story's
transcript entries per broker (exit code, normalised output, whether the two brokers printed the same) and the
outcome of the drivers checked for what they promise (verifiable producer/consumer, perf tools, MirrorMaker 2).
At the end of the session the table is printed in the terminal summary (tests/reference/conftest.py) and,
where ``GROUPCOORD_TOOL_TABLE`` names a file, written there as Markdown. So the list in docs/KAFKA_TOOLS.md is
made by the scenarios themselves:

    .venv/bin/python -m tests.reference.kafka_tool_table          # runs the full tool set, rewrites the doc
"""

from __future__ import annotations

import datetime
import os
import re
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "KAFKA_TOOLS.md"
BROKERS = ("groupcoord", "kafka")


@dataclass
class Row:
    story: str
    command: str
    outcomes: dict[str, str] = field(default_factory=dict)  # broker -> "exit 0: first line"
    agree: bool | None = None  # None: not compared (a check of each broker on its own)


@dataclass
class ToolTable:
    rows: list[Row] = field(default_factory=list)

    def record_story(self, story_name: str, told: dict) -> None:
        """Both brokers' transcripts of one story (kafka_tool_scenarios.Story), entry by entry."""
        ours, theirs = told["groupcoord"], told["kafka"]
        for i, (command, text) in enumerate(ours.transcript):
            row = Row(story_name, _without_bootstrap(command))
            row.outcomes["groupcoord"] = _outcome(ours.exits[i], text)
            if i < len(theirs.transcript) and theirs.transcript[i][0] == command:
                row.outcomes["kafka"] = _outcome(theirs.exits[i], theirs.transcript[i][1])
                row.agree = theirs.transcript[i][1] == text and theirs.exits[i] == ours.exits[i]
            else:
                row.outcomes["kafka"] = "(not reached)"
                row.agree = False
            self.rows.append(row)

    def record_check(self, story_name: str, command: str, broker: str, outcome: str, passed: bool) -> None:
        """A driver checked on one broker for what it promises; the brokers agree when both pass."""
        row = next((r for r in self.rows if r.story == story_name and r.command == command), None)
        if row is None:
            row = Row(story_name, command)
            self.rows.append(row)
        row.outcomes[broker] = ("pass: " if passed else "FAIL: ") + outcome
        done = [row.outcomes.get(b, "") for b in BROKERS]
        row.agree = all(o.startswith("pass") for o in done) if all(done) else None

    def markdown(self) -> str:
        lines = ["| # | story | command | groupcoord | Kafka 4.3.1 | same |", "|---|---|---|---|---|---|"]
        for n, row in enumerate(self.rows, 1):
            same = {True: "yes", False: "**NO**", None: "—"}[row.agree]
            cells = [str(n), row.story, f"`{row.command}`",
                     *(_cell(row.outcomes.get(b, "(not run)")) for b in BROKERS), same]
            lines.append("| " + " | ".join(cells) + " |")
        agreed = sum(1 for r in self.rows if r.agree)
        lines.append("")
        lines.append(f"{len(self.rows)} commands; the two brokers agree on {agreed}; "
                     f"differ on {sum(1 for r in self.rows if r.agree is False)}; "
                     f"{sum(1 for r in self.rows if r.agree is None)} not compared (one broker only).")
        return "\n".join(lines)


TABLE = ToolTable()


@contextmanager
def checked(story: str, command: str, broker: str):
    """Records a driver's outcome on one broker in the tool table: the text the block leaves in the yielded
    dict when it passes, the assertion's first line when it fails (a skip records nothing)."""
    outcome = {"text": "as promised"}
    try:
        yield outcome
    except Exception as exc:
        TABLE.record_check(story, command, broker, (str(exc).strip().splitlines() or [type(exc).__name__])[0], False)
        raise
    TABLE.record_check(story, command, broker, outcome["text"], True)


def _without_bootstrap(command: str) -> str:
    return command.replace("--bootstrap-server <bootstrap> ", "").replace("bootstrap.servers=<bootstrap> ", "")


def _outcome(returncode: int, text: str) -> str:
    """The exit code and the line that says most: an error's own message (its exception's simple name and
    text, not the "Error while executing … with args" preamble), else the first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return f"exit {returncode}, no output"
    errors = [line for line in lines if re.search(r"(Exception|Error)\b.*:", line)
              and not line.startswith("Error while executing")]
    shown = re.sub(r"\b(?:[a-z_$][\w$]*\.)+(?=[A-Z]\w*(?:Exception|Error)\b)", "", errors[-1] if errors else lines[0])
    return f"exit {returncode}, {len(lines)} line{'s' if len(lines) > 1 else ''}: {shown}"


def _cell(text: str, limit: int = 110) -> str:
    text = text if len(text) <= limit else text[:limit - 1] + "…"
    return text.replace("|", "\\|").replace("`", "'")


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + (" (with uncommitted changes)" if git("status", "--porcelain",
                                                                                     "--untracked-files=no") else "")


def document(table: ToolTable, elapsed_s: float | None = None) -> str:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    took = f", the set took {elapsed_s:.0f} s" if elapsed_s else ""
    return f"""# Kafka's own tools against groupcoord and against Kafka 4.3.1

Generated by the tool tests themselves (`tests/reference/kafka_tool_table.py`; regenerate with
`.venv/bin/python -m tests.reference.kafka_tool_table`) on {now}, at commit {_commit()}{took}.

Every row is one command of a story in `tests/reference/kafka_tool_scenarios.py` (or a driver of
`test_kafka_tools.py` / `test_mirror_maker.py`), run against a `groupcoord serve` daemon and against the Kafka
4.3.1 reference broker. The outcome is the exit code and the first line of the normalised output (ids, hosts,
times and the run's name suffix masked; some commands keep only the lines the story compares). "same" is
whether the two brokers' normalised outputs and exit codes are equal line for line (for the drivers: whether
both kept their promise). Tools are Kafka 4.3.1's own classes from Maven Central (`kafka-tools`, and
`kafka_2.13` for `kafka-configs`), started as the shell scripts would start them.

{table.markdown()}
"""


def write(path: Path, table: ToolTable, elapsed_s: float | None = None) -> None:
    path.write_text(document(table, elapsed_s))


def main() -> int:
    """Runs the full tool set (GROUPCOORD_FULL_TESTS=1) with the table written to docs/KAFKA_TOOLS.md."""
    env = dict(os.environ, GROUPCOORD_FULL_TESTS="1", GROUPCOORD_TOOL_TABLE=str(DOC))
    tests = sys.argv[1:] or ["tests/reference/test_kafka_tools.py", "tests/reference/test_mirror_maker.py"]
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *tests], cwd=ROOT,
                          env=env).returncode


if __name__ == "__main__":
    raise SystemExit(main())
