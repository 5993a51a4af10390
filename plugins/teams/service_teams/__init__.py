"""Teams plugin: teams, memberships, roles (viewer, run-only, developer, admin, custom), role assignments
and shares at the reference's ``/api/v1/authz/*`` routes, answering ``permission_allowed``."""

__version__ = "0.1.0"
