"""footprint-reviewer: review agentfootprint run recordings."""

__version__ = "0.1.0"
