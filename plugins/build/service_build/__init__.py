"""The build plugin: flow builds as jobs whose events clients stream, poll or receive directly."""

__version__ = "0.1.0"
