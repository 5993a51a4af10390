"""A2A plugin: publish ``flow_type=agent`` flows as A2A agents (v0.3 card, JSON-RPC tasks run as jobs)."""

__version__ = "0.1.0"
