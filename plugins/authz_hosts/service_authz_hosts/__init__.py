"""Example authorization plugin: public principals are allowed on allowlisted hosts, each mapped to a tenant."""

__version__ = "0.1.0"
