"""Kafka's client quota managers (ClientQuotaManager, ClientRequestQuotaManager, ConnectionQuotas' per-IP
connection rate): which quota applies to a request, its sensor, and the throttle time it earns.

A request is charged to the sensor named by its *metric tags* (user, client-id), chosen from the quotas
that exist by Kafka's precedence (DefaultQuotaCallback.quotaMetricTags):

1. /users/<user>/clients/<client-id>      5. /users/<default>/clients/<default>
2. /users/<user>/clients/<default>        6. /users/<default>
3. /users/<user>                          7. /clients/<client-id>
4. /users/<default>/clients/<client-id>   8. /clients/<default>

so every client of a user with a user quota shares one sensor, while client-id quotas give each client its
own. The bound of a sensor is the most specific quota for its tags (quotaLimit). Until a first quota of a
type is configured the manager is disabled and charges nothing (Kafka's QuotaTypes.NoQuotas).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterator

from groupcoord.coordinator.quotas.entities import (
    CLIENT_ID,
    CONSUMER_BYTE_RATE,
    CONTROLLER_MUTATION_RATE,
    IP,
    PRODUCER_BYTE_RATE,
    REQUEST_PERCENTAGE,
    USER,
    QuotaEntity,
)
from groupcoord.coordinator.quotas.rate import SampledRate

DEFAULT = ("<default>",)  # the default entity of a type: a key no name can equal
INACTIVE_SENSOR_EXPIRATION_MS = 3600 * 1000  # ClientQuotaManager.InactiveSensorExpirationTimeSeconds
_SWEEP_EVERY = 4096

_CLIENT_ID_ENABLED, _USER_ENABLED, _USER_CLIENT_ENABLED = 1, 2, 4

# (user part, client-id part); each None (absent), DEFAULT, or a name
Key = tuple[object, object]
Tags = tuple[str, str]


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class ThrottleStats:
    """Throttled responses and throttle time given, for one client's quota sensor."""
    throttled: int = 0
    throttle_ms: int = 0


class ClientQuotaManager:
    """One quota type (Produce, Fetch, Request, ControllerMutation): overrides, sensors and throttle times."""

    def __init__(self, quota_type: str, samples: int, window_seconds: int,
                 max_throttle_ms: int | None = None, clock_ms: Callable[[], int] = _now_ms) -> None:
        self.quota_type = quota_type
        self.samples = samples
        self.window_ms = window_seconds * 1000
        self.max_throttle_ms = max_throttle_ms
        self.clock_ms = clock_ms
        self._enabled = 0
        self._overrides: dict[Key, float] = {}
        self.sensors: dict[Tags, SampledRate] = {}
        self.throttles: dict[Tags, ThrottleStats] = {}
        self._records = 0

    @property
    def enabled(self) -> bool:
        return self._enabled != 0

    # -- configuration ----------------------------------------------------------------------------
    def update_quota(self, entity: QuotaEntity, bound: float | None) -> None:
        """ClientQuotaManager.updateQuota: ``bound`` None removes the quota. Once a kind of quota has been
        configured it stays enabled (Kafka's quotaTypesEnabled is only ever or-ed)."""
        user = entity.get(USER, None) if entity.has(USER) else None
        client = entity.get(CLIENT_ID, None) if entity.has(CLIENT_ID) else None
        key: Key = (None if not entity.has(USER) else (DEFAULT if user is None else user),
                    None if not entity.has(CLIENT_ID) else (DEFAULT if client is None else client))
        if key[0] is not None:
            self._enabled |= _USER_CLIENT_ENABLED if key[1] is not None else _USER_ENABLED
        elif key[1] is not None:
            self._enabled |= _CLIENT_ID_ENABLED
        if bound is None:
            self._overrides.pop(key, None)
        else:
            self._overrides[key] = bound
        for tags, sensor in self.sensors.items():
            sensor.bound = self.quota_limit(tags)

    # -- which sensor, which bound ----------------------------------------------------------------
    def metric_tags(self, user: str, client_id: str) -> Tags:
        enabled = self._enabled
        if enabled in (0, _CLIENT_ID_ENABLED):
            return "", client_id
        if enabled == _USER_ENABLED:
            return user, ""
        if enabled == _USER_CLIENT_ENABLED:
            return user, client_id
        o = self._overrides
        if (user, client_id) in o or (user, DEFAULT) in o:
            return user, client_id
        if (user, None) in o:
            return user, ""
        if (DEFAULT, client_id) in o or (DEFAULT, DEFAULT) in o:
            return user, client_id
        if (DEFAULT, None) in o:
            return user, ""
        return "", client_id

    def quota_limit(self, tags: Tags) -> float | None:
        user, client_id = tags
        o = self._overrides
        if user and client_id:
            for key in ((user, client_id), (user, DEFAULT), (DEFAULT, client_id), (DEFAULT, DEFAULT)):
                if key in o:
                    return o[key]
        elif user:
            for key in ((user, None), (DEFAULT, None)):
                if key in o:
                    return o[key]
        elif client_id:
            for key in ((None, client_id), (None, DEFAULT)):
                if key in o:
                    return o[key]
        return None

    def sensor(self, user: str, client_id: str) -> tuple[Tags, SampledRate]:
        tags = self.metric_tags(user, client_id)
        sensor = self.sensors.get(tags)
        if sensor is None:
            sensor = self.sensors[tags] = SampledRate(self.samples, self.window_ms, self.quota_limit(tags))
        return tags, sensor

    # -- charging ---------------------------------------------------------------------------------
    def record(self, user: str, client_id: str, value: float, now_ms: int | None = None) -> int:
        """maybeRecordAndGetThrottleTimeMs: the throttle time in ms (0 within the quota)."""
        if not self._enabled:
            return 0
        now = self.clock_ms() if now_ms is None else now_ms
        self._records += 1
        if self._records % _SWEEP_EVERY == 0:
            self._expire_inactive(now)
        _, sensor = self.sensor(user, client_id)
        return sensor.record_and_throttle_ms(value, now, self.max_throttle_ms)

    def unrecord(self, user: str, client_id: str, value: float, now_ms: int | None = None) -> None:
        """unrecordQuotaSensor: take back a value whose request was answered empty because it was throttled."""
        if self._enabled:
            _, sensor = self.sensor(user, client_id)
            sensor.record(-value, self.clock_ms() if now_ms is None else now_ms)

    def max_value_in_window(self, user: str, client_id: str) -> float | None:
        """getMaxValueInQuotaWindow: what a client may take in one window's worth of samples (Fetch caps its
        size with it), None when unbounded."""
        if not self._enabled:
            return None
        tags = self.metric_tags(user, client_id)
        limit = self.quota_limit(tags)
        return None if limit is None else limit * (self.samples - 1) * (self.window_ms / 1000)

    def note_throttle(self, user: str, client_id: str, throttle_ms: int) -> None:
        tags = self.metric_tags(user, client_id)
        stats = self.throttles.get(tags)
        if stats is None:
            stats = self.throttles[tags] = ThrottleStats()
        stats.throttled += 1
        stats.throttle_ms += throttle_ms

    def _expire_inactive(self, now_ms: int) -> None:
        for tags in [t for t, s in self.sensors.items() if now_ms - s.last_record_ms > INACTIVE_SENSOR_EXPIRATION_MS]:
            del self.sensors[tags]

    def rates(self, now_ms: int | None = None) -> Iterator[tuple[Tags, float, float | None]]:
        now = self.clock_ms() if now_ms is None else now_ms
        for tags, sensor in list(self.sensors.items()):
            yield tags, sensor.measure(now), sensor.bound


class ConnectionRateQuotas:
    """ConnectionQuotas' per-IP ``connection_creation_rate``: a connection past an address's rate is held for
    the throttle time and then closed unread (Kafka's DelayedCloseSocket)."""

    def __init__(self, samples: int, window_seconds: int, clock_ms: Callable[[], int] = _now_ms) -> None:
        self.samples = samples
        self.window_ms = window_seconds * 1000
        self.clock_ms = clock_ms
        self._overrides: dict[object, float] = {}  # ip or DEFAULT -> connections per second
        self.sensors: dict[str, SampledRate] = {}
        self.throttled = 0

    @property
    def enabled(self) -> bool:
        return bool(self._overrides)

    def update_quota(self, entity: QuotaEntity, bound: float | None) -> None:
        name = entity.get(IP, None)
        key = DEFAULT if name is None else name
        if bound is None:
            self._overrides.pop(key, None)
        else:
            self._overrides[key] = bound
        self.sensors.clear()  # rebuilt with the new bound at the next connection, as Kafka recreates them

    def limit(self, ip: str) -> float | None:
        if ip in self._overrides:
            return self._overrides[ip]
        return self._overrides.get(DEFAULT)

    def admit(self, ip: str, now_ms: int | None = None) -> int:
        """0 to accept the connection, else the ms to hold it before closing it (it is not counted)."""
        limit = self.limit(ip)
        if limit is None:
            return 0
        now = self.clock_ms() if now_ms is None else now_ms
        sensor = self.sensors.get(ip)
        if sensor is None:
            sensor = self.sensors[ip] = SampledRate(self.samples, self.window_ms, limit)
        throttle = sensor.record_and_throttle_ms(1.0, now, self.window_ms)
        if throttle > 0:
            sensor.record(-1.0, now)  # "unrecord the connection since we won't accept the connection"
            self.throttled += 1
        return throttle


class QuotaManagers:
    """The broker's quota managers (Kafka's QuotaManagers), fed by the quota store."""

    def __init__(self, samples: int = 11, window_seconds: int = 1, clock_ms: Callable[[], int] = _now_ms) -> None:
        self.produce = ClientQuotaManager("Produce", samples, window_seconds, clock_ms=clock_ms)
        self.fetch = ClientQuotaManager("Fetch", samples, window_seconds, clock_ms=clock_ms)
        self.request = ClientQuotaManager("Request", samples, window_seconds,
                                          max_throttle_ms=window_seconds * 1000, clock_ms=clock_ms)
        self.controller_mutation = ClientQuotaManager("ControllerMutation", samples, window_seconds,
                                                      clock_ms=clock_ms)
        self.connections = ConnectionRateQuotas(samples, window_seconds, clock_ms=clock_ms)
        self.by_key = {PRODUCER_BYTE_RATE: self.produce, CONSUMER_BYTE_RATE: self.fetch,
                       REQUEST_PERCENTAGE: self.request, CONTROLLER_MUTATION_RATE: self.controller_mutation}

    @property
    def enabled(self) -> bool:
        """Whether any request may be throttled: what the connection's one check reads."""
        return self.produce.enabled or self.fetch.enabled or self.request.enabled

    def apply(self, entity: QuotaEntity, key: str, bound: float | None) -> None:
        if entity.has(IP):
            self.connections.update_quota(entity, bound)
            return
        manager = self.by_key.get(key)
        if manager is not None:
            manager.update_quota(entity, bound)

    def client_managers(self) -> tuple[ClientQuotaManager, ...]:
        return self.produce, self.fetch, self.request, self.controller_mutation
