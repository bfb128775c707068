"""Deciding *when* to dream: gates, the lock, the stamp, interruption, hooks, schedules."""
