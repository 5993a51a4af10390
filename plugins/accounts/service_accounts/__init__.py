"""Accounts plugin: users, sign-in (JWT in headers and cookies), API keys, auto-login."""

__version__ = "0.1.0"
