"""The one place that talks to a model (built in a later issue)."""
