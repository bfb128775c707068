"""Deciding *when* to dream: gates, lock, stamp, hook scripts, schedules."""
