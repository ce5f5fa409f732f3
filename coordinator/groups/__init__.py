"""The classic consumer-group coordinator: a sans-I/O core sharded like __consumer_offsets, and its async runtime."""
