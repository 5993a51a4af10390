"""Observability: OpenTelemetry traces of every run, Prometheus metrics (docs/observability.md)."""

__version__ = "0.1.0"
