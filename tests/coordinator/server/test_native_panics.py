"""A native panic inside a handler (pyo3's PanicException is a BaseException) costs that request an
error answer and nothing else: the connection and the server keep serving."""


HEARTBEAT = 12


class PanicException(BaseException):
    pass


async def test_a_handler_that_panics_answers_an_error_and_the_connection_serves_on(make_server, connect):
    calls = []

    def heartbeat(ctx, request):
        calls.append(1)
        if len(calls) == 1:
            raise PanicException("index out of bounds")
        return {"throttle_time": 0, "error_code": 0}

    server, _ = await make_server(lambda d: d.register(HEARTBEAT, heartbeat, 0, 4))
    client = await connect(server.address)
    client.send(HEARTBEAT, 0, {"group_id": "g", "generation_id": 1, "member_id": "m"})
    _, answer = await client.receive(HEARTBEAT, 0)
    assert answer.error_code == -1  # UNKNOWN_SERVER_ERROR
    client.send(HEARTBEAT, 0, {"group_id": "g", "generation_id": 1, "member_id": "m"})
    _, answer = await client.receive(HEARTBEAT, 0)
    assert answer.error_code == 0
