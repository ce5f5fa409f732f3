"""Bounded chaos in the default run (issue 17): 20 SIGKILLs at random moments under commit and produce load;
every acknowledged commit and record survives. `make chaos` runs the same harness for hundreds of kills."""

from tests.support.chaos import Chaos


def test_twenty_sigkills_under_load_lose_nothing_acknowledged(tmp_path):
    report = Chaos(tmp_path / "data", seed=17).run(kills=20, load_s=(0.1, 0.4), time_limit_s=240)
    print(report.summary())
    assert report.kills >= 10, report.summary()
    assert report.acknowledged_commits and report.acknowledged_records, report.summary()
    assert report.problems == [], report.summary()
    assert report.lost_commits == 0 and report.lost_records == 0
