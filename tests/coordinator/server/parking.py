"""Handlers for ordering tests: a Heartbeat that parks until released, and ApiVersions that records which
requests the server ran."""

import asyncio

HEARTBEAT, API_VERSIONS = 12, 18


def park_heartbeats_and_count_api_versions(dispatcher, release: asyncio.Event, served: list[int]) -> None:
    async def parked_heartbeat(ctx, request):
        await release.wait()
        return {"throttle_time": 0, "error_code": 0}

    dispatcher.register(HEARTBEAT, parked_heartbeat, 0, 4)
    original = dispatcher._handlers[API_VERSIONS]

    def counting(ctx, request):
        served.append(ctx.correlation_id)
        return original(ctx, request)

    dispatcher._handlers[API_VERSIONS] = counting
