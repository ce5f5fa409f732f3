"""A handler's coroutine driven by the connection (server/driven.py) ends as the same coroutine run by an asyncio
Task would: the same result, the same exception, the same cancellation, whether it never waits, waits on
futures (asyncio's, or an append's prompt future resolved promptly), yields bare, or is cancelled while it waits."""

import asyncio

import pytest

from groupcoord.coordinator.server.driven import Driven
from groupcoord.storage.prompt_future import PromptFuture, run_due

from .parking import HEARTBEAT

HB_BODY = {"group_id": "g", "generation_id": 1, "member_id": "m"}


async def never_waits():
    return {"error_code": 0}


async def waits_twice(first, second):
    a = await first
    await asyncio.sleep(0)
    b = await second
    return a + b


async def fails_after_waiting(future):
    await future
    raise ValueError("handler bug")


async def catches_its_cancellation(future, seen):
    try:
        await future
    except asyncio.CancelledError:
        seen.append("cancelled")
        raise


def outcome(result, exc):
    return ("raised", type(exc).__name__, str(exc)) if exc is not None else ("returned", result)


async def run_as_task(make, resolve, cancel_at=None):
    """The outcome of ``make()`` run by a Task, ``resolve`` called once it has started."""
    task = asyncio.ensure_future(make())
    await asyncio.sleep(0)
    if cancel_at == "waiting":
        task.cancel()
    resolve()
    try:
        return outcome(await task, None)
    except BaseException as exc:
        return outcome(None, exc)


async def run_driven(make, resolve, cancel_at=None):
    ended = asyncio.get_running_loop().create_future()
    driven = Driven(make(), lambda d, result, exc: ended.set_result(outcome(result, exc)),
                    asyncio.get_running_loop())
    driven.step()
    if cancel_at == "waiting":
        driven.cancel()
    resolve()
    await driven.finished()
    return await ended


@pytest.mark.parametrize("run", [run_as_task, run_driven])
async def test_a_coroutine_that_never_waits_returns_its_answer(run):
    assert await run(never_waits, lambda: None) == ("returned", {"error_code": 0})


def new_future(kind):
    loop = asyncio.get_running_loop()
    return loop.create_future() if kind == "asyncio" else PromptFuture(loop=loop)


def resolve_as(kind, future, result):
    """A prompt future is resolved as a write round resolves an append's: promptly, its waiter run by run_due."""
    if kind == "asyncio":
        future.set_result(result)
    else:
        future.resolve_promptly(result)
        run_due()


async def scenario(name, kind="asyncio"):
    """(make, resolve, cancel_at, extra) for each scenario, fresh futures each time."""
    loop = asyncio.get_running_loop()
    first, second = new_future(kind), new_future(kind)
    seen = []
    if name == "waits on futures and a bare yield":
        def resolve():
            resolve_as(kind, first, 2)
            loop.call_later(0.01, resolve_as, kind, second, 3)
        return (lambda: waits_twice(first, second)), resolve, None, seen
    if name == "fails after waiting":
        return (lambda: fails_after_waiting(first)), (lambda: resolve_as(kind, first, None)), None, seen
    if name == "cancelled while waiting":
        return (lambda: catches_its_cancellation(first, seen)), (lambda: None), "waiting", seen
    raise AssertionError(name)


@pytest.mark.parametrize("kind", ["asyncio", "prompt"])
@pytest.mark.parametrize("name", ["waits on futures and a bare yield", "fails after waiting",
                                  "cancelled while waiting"])
async def test_a_driven_coroutine_ends_as_the_same_coroutine_in_a_task(name, kind):
    make, resolve, cancel_at, seen_by_task = await scenario(name, kind)
    by_task = await run_as_task(make, resolve, cancel_at)
    make, resolve, cancel_at, seen_driven = await scenario(name, kind)
    driven = await run_driven(make, resolve, cancel_at)
    assert driven == by_task and seen_driven == seen_by_task
    assert by_task[0] == ("raised" if name != "waits on futures and a bare yield" else "returned")


@pytest.mark.parametrize("kind", ["asyncio", "prompt"])
async def test_cancelled_after_its_future_resolved_it_meets_the_cancellation_at_its_next_step(kind):
    loop = asyncio.get_running_loop()
    outcomes = []
    for run_with_task in (True, False):
        future, seen = new_future(kind), []
        coro = catches_its_cancellation(future, seen)
        if run_with_task:
            task = asyncio.ensure_future(coro)
            await asyncio.sleep(0)
            future.set_result(1)  # the task's wake-up is scheduled, not run
            task.cancel()
            try:
                outcomes.append((outcome(await task, None), seen))
            except BaseException as exc:
                outcomes.append((outcome(None, exc), seen))
        else:
            ended = loop.create_future()
            driven = Driven(coro, lambda d, result, exc: ended.set_result(outcome(result, exc)), loop)
            driven.step()
            future.set_result(1)
            driven.cancel()
            outcomes.append((await ended, seen))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0][:2] == ("raised", "CancelledError")


async def test_coroutine_handlers_answer_in_request_order_and_a_client_leaving_cancels_the_waiting_one(make_server,
                                                                                                    connect):
    release = asyncio.get_running_loop().create_future()
    seen = []

    async def heartbeat(ctx, request):
        if ctx.correlation_id == 1:  # the first waits; those behind it answer without waiting
            await release
        return {"throttle_time": 0, "error_code": ctx.correlation_id}

    async def parked_forever(ctx, request):
        await catches_its_cancellation(asyncio.get_running_loop().create_future(), seen)

    server, dispatcher = await make_server(lambda d: d.register(HEARTBEAT, heartbeat, 0, 4))
    client = await connect(server.address)
    sent = [client.send(HEARTBEAT, 4, HB_BODY) for _ in range(3)]
    await client.writer.drain()
    await asyncio.sleep(0.05)
    release.set_result(None)
    answers = [await client.receive(HEARTBEAT, 4) for _ in sent]
    assert [(c, a.error_code) for c, a in answers] == [(c, c) for c in sent]

    dispatcher.register(HEARTBEAT, parked_forever, 0, 4)
    client.send(HEARTBEAT, 4, HB_BODY)
    await client.writer.drain()
    await asyncio.sleep(0.05)
    client.writer.close()
    for _ in range(100):
        if seen:
            break
        await asyncio.sleep(0.01)
    assert seen == ["cancelled"]
