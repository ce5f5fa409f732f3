"""Running the broker as a process: the `groupcoord` command line (`cli.py`, offline log maintenance in
`log_cli.py`), log output, the metrics HTTP endpoint, the data-directory lock, and the README's generated
configuration table."""
