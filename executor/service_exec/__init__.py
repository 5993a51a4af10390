"""The stateless executor: run exported flows with the engine alone (``service-exec run|serve``).

No database, no accounts, no editor, no Redis: flows come from JSON files, variables from
the environment, and every request is independent, so any number of replicas can serve the
same flows behind a load balancer.
"""

__version__ = "0.1.0"
