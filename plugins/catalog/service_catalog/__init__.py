"""Catalog plugin: the component catalog (``/api/v1/all``), code and prompt validation, the model picker's lists."""

__version__ = "0.1.0"
