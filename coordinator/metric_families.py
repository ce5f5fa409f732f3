"""prometheus-client's metric families, imported when the first scrape asks for one, not at the daemon's start.

Importing prometheus_client imports its exposition module, and with it http.server, email, urllib and wsgiref:
some 7 % of the daemon's start-up, for an endpoint that nobody scrapes before the broker listens. So the
broker's metrics (metrics.py) keep their values as plain numbers and build prometheus-client's families only
in ``collect()``, through this module: ``metric_families.GaugeMetricFamily`` imports prometheus_client on its
first use (a module ``__getattr__``) and is an ordinary module attribute from then on. The daemon's warm-up
(apis/warm_up.py) imports prometheus_client after ``listening on``, so the first scrape does not pay for it.
"""

from __future__ import annotations

from typing import Any

_FAMILIES = ("CounterMetricFamily", "GaugeMetricFamily", "HistogramMetricFamily")


def __getattr__(name: str) -> Any:
    if name not in _FAMILIES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from prometheus_client import core

    for family in _FAMILIES:
        globals()[family] = getattr(core, family)
    return globals()[name]


def created_series() -> bool:
    """Whether prometheus-client exposes its counters' and histograms' ``_created`` series (on unless
    PROMETHEUS_DISABLE_CREATED_SERIES is set or ``disable_created_metrics()`` was called): the metrics kept
    as plain numbers in place of its Counter and Histogram expose them as those would."""
    from prometheus_client import metrics

    return bool(getattr(metrics, "_use_created", True))
