"""The Kafka APIs this broker serves, one module each: its key, its version range and its handler.

`registry.py` lists them and binds them to the dispatcher; `api.py` says what a module declares and
`services.py` what its handler is given.
"""
