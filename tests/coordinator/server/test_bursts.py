"""A flood of refusals is two log lines, not one per refusal."""

from groupcoord.coordinator.server.bursts import BurstLog


class Lines:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict]] = []

    def warning(self, event: str, **kw) -> None:
        self.lines.append(("warning", event, kw))

    def info(self, event: str, **kw) -> None:
        self.lines.append(("info", event, kw))


def test_a_burst_logs_its_start_and_its_end_with_the_count():
    now = [0.0]
    logger = Lines()
    bursts = BurstLog(logger, clock=lambda: now[0], quiet_s=10)
    for _ in range(1000):
        bursts.event("max.connections", "refused")
        now[0] += 0.001
    assert [level for level, _, _ in logger.lines] == ["warning"]
    now[0] += 11
    bursts.end_quiet()
    assert logger.lines[-1][0] == "info" and logger.lines[-1][2]["events"] == 1000
    assert bursts.active == 0


def test_a_new_burst_after_a_quiet_spell_is_logged_again():
    now = [0.0]
    logger = Lines()
    bursts = BurstLog(logger, clock=lambda: now[0], quiet_s=10)
    bursts.event(("max.connections.per.ip", "127.0.0.1"), "refused")
    now[0] = 30
    bursts.event(("max.connections.per.ip", "127.0.0.1"), "refused")
    assert [level for level, _, _ in logger.lines] == ["warning", "info", "warning"]
    assert logger.lines[1][2]["peer"] == "127.0.0.1"


def test_end_closes_a_burst_at_once():
    logger = Lines()
    bursts = BurstLog(logger)
    bursts.event("descriptors", "out of descriptors")
    bursts.event("descriptors", "out of descriptors")
    bursts.end("descriptors")
    assert [level for level, _, _ in logger.lines] == ["warning", "info"]
    assert logger.lines[1][2]["events"] == 2
