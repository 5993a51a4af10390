"""Extensions plugin: reload component bundles and switch plugins on or off while the service runs."""

__version__ = "0.1.0"
