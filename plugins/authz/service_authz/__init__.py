"""The default authorization plugin: with ``SERVICE_AUTHZ_ENABLED=true`` anonymous public access is denied."""

__version__ = "0.1.0"
