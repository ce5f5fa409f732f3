"""The pipeline's jobs: each a plain function over the `consumer_offsets` DataFrame plus a CLI runner."""
