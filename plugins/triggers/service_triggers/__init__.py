"""Triggers plugin: every run recorded as an execution (list, retry, retry policy, error flow), cron and
interval schedules fired once per tick across processes, and signed trigger webhooks."""

__version__ = "0.1.0"
