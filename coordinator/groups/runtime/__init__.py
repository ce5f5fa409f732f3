"""What every coordinator shard runs on, knowing nothing of groups: Effects, the timer, the asyncio runtime."""
