"""An append's prompt future (storage.prompt_future): its one prompt waiter runs in the callback that resolved it
promptly (``run_due``), never in the middle of it and never a loop turn later; resolved any other way, or without
``run_due``, it runs a turn later as a done callback would; a Task awaiting it sees an ordinary future."""

from __future__ import annotations

import asyncio

import pytest

from groupcoord.storage.prompt_future import PromptFuture, run_due


async def test_a_prompt_waiter_runs_in_run_due_after_the_resolver_is_done_and_before_any_done_callback():
    loop = asyncio.get_running_loop()
    future, order = PromptFuture(loop=loop), []
    future.add_done_callback(lambda f: order.append("done callback"))
    future.add_prompt_callback(lambda f: order.append(("prompt", f.result())))
    future.resolve_promptly(7)
    order.append("resolver's bookkeeping")
    run_due()
    assert order == ["resolver's bookkeeping", ("prompt", 7)]
    await asyncio.sleep(0)
    assert order[-1] == "done callback"


async def test_waiters_run_in_the_order_their_futures_were_resolved_and_those_they_resolve_run_too():
    loop = asyncio.get_running_loop()
    first, second, third = (PromptFuture(loop=loop) for _ in range(3))
    order = []
    first.add_prompt_callback(lambda f: (order.append(1), third.resolve_promptly(None)))
    second.add_prompt_callback(lambda f: order.append(2))
    third.add_prompt_callback(lambda f: order.append(3))
    second.resolve_promptly(None)
    first.resolve_promptly(None)
    run_due()
    assert order == [2, 1, 3]


async def test_without_run_due_the_waiter_still_runs_on_the_next_turn():
    future, order = PromptFuture(loop=asyncio.get_running_loop()), []
    future.add_prompt_callback(lambda f: order.append("prompt"))
    future.resolve_promptly(None)
    assert order == []
    await asyncio.sleep(0)
    assert order == ["prompt"]


@pytest.mark.parametrize("how", ["set_result", "set_exception", "cancel"])
async def test_resolved_any_other_way_the_waiter_runs_a_turn_later_as_a_done_callback(how):
    future, seen = PromptFuture(loop=asyncio.get_running_loop()), []
    future.add_prompt_callback(lambda f: seen.append("cancelled" if f.cancelled() else
                                                     repr(f.exception()) if f.exception() else f.result()))
    {"set_result": lambda: future.set_result(1), "set_exception": lambda: future.set_exception(OSError("eio")),
     "cancel": future.cancel}[how]()
    run_due()
    assert seen == []
    await asyncio.sleep(0)
    assert seen == [{"set_result": 1, "set_exception": "OSError('eio')", "cancel": "cancelled"}[how]]


async def test_a_waiter_added_once_it_is_done_runs_on_the_next_turn():
    future, seen = PromptFuture(loop=asyncio.get_running_loop()), []
    future.resolve_promptly(3)
    future.add_prompt_callback(lambda f: seen.append(f.result()))
    run_due()
    assert seen == []
    await asyncio.sleep(0)
    assert seen == [3]


async def test_a_task_awaiting_it_sees_an_ordinary_future():
    loop = asyncio.get_running_loop()
    future = PromptFuture(loop=loop)
    task = asyncio.ensure_future(future)
    await asyncio.sleep(0)
    future.resolve_promptly("durable")
    run_due()
    assert await asyncio.wait_for(task, 5) == "durable"


async def test_a_failing_waiter_is_reported_to_the_loop_and_the_others_still_run():
    loop = asyncio.get_running_loop()
    reported, seen = [], []
    loop.set_exception_handler(lambda _loop, context: reported.append(context["exception"]))
    try:
        first, second = PromptFuture(loop=loop), PromptFuture(loop=loop)
        first.add_prompt_callback(lambda f: 1 / 0)
        second.add_prompt_callback(lambda f: seen.append("second"))
        first.resolve_promptly(None)
        second.resolve_promptly(None)
        run_due()
    finally:
        loop.set_exception_handler(None)
    assert seen == ["second"] and [type(e) for e in reported] == [ZeroDivisionError]
