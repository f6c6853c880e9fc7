"""The data signatures (``*.toml``) read by ``parsers.signatures``."""
