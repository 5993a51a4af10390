"""Governance: catalog and model-provider policies, component usage and the policy change log."""

__version__ = "0.1.0"
