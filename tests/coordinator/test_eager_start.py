"""coordinator.eager_start: a coroutine started now runs up to its first suspension in the caller's turn; one
that ends there needs no Task; one that suspends carries on in a Task exactly as if it had been one from the
start (values, exceptions and cancellation passed through); an exception before any suspension is kept for
the caller to meet where it awaits."""

import asyncio

import pytest

from groupcoord.coordinator.eager_start import start_eagerly


async def test_a_coroutine_that_never_waits_gives_its_result_without_a_task():
    steps = []

    async def quick(n):
        steps.append(n)
        return n * 2

    tasks_before = len(asyncio.all_tasks())
    started = [start_eagerly(quick(n)) for n in range(3)]
    assert steps == [0, 1, 2]  # run in the order of the calls, before the caller's next line
    assert [(s.finished, s.result, s.task) for s in started] == [(True, 0, None), (True, 2, None), (True, 4, None)]
    assert len(asyncio.all_tasks()) == tasks_before


async def test_a_coroutine_that_waits_carries_on_in_a_task_from_where_it_stopped():
    gate = asyncio.get_running_loop().create_future()
    steps = []

    async def waits():
        steps.append("before")
        got = await gate
        steps.append(("after", got))
        await asyncio.sleep(0)  # a bare yield to the loop, passed through too
        return got + 1

    started = start_eagerly(waits())
    assert steps == ["before"] and not started.finished and not started.task.done()
    await asyncio.sleep(0)
    assert steps == ["before"]  # still waiting for the same future
    gate.set_result(41)
    assert await started.task == 42
    assert steps == ["before", ("after", 41)]


async def test_an_exception_thrown_at_the_suspension_reaches_the_coroutine():
    gate = asyncio.get_running_loop().create_future()

    async def handles():
        try:
            await gate
        except KeyError as exc:
            return f"handled {exc.args[0]}"
        return "not reached"

    started = start_eagerly(handles())
    gate.set_exception(KeyError("k"))
    assert await started.task == "handled k"


async def test_cancelling_the_task_cancels_the_coroutine_where_it_waits():
    gate = asyncio.get_running_loop().create_future()
    seen = []

    async def waits():
        try:
            await gate
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    started = start_eagerly(waits())
    await asyncio.sleep(0)
    started.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await started.task
    assert seen == ["cancelled"] and gate.cancelled()


async def test_an_exception_before_any_suspension_is_met_where_the_caller_awaits():
    async def fails():
        raise ValueError("early")

    started = start_eagerly(fails())
    assert not started.finished
    with pytest.raises(ValueError, match="early"):
        await started.task
