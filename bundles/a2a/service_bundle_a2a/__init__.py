"""A2A bundle: the ``A2A Agent`` component (calls a remote A2A agent through the egress rules)."""
