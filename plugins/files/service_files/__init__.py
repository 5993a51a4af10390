"""Files plugin: uploads per user (/api/v2/files) and per flow (/api/v1/files), profile pictures."""

__version__ = "0.1.0"
