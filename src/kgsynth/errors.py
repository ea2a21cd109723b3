"""Errors a user can act on. Each message is one line that says what is wrong and where."""


class KgsynthError(Exception):
    """Base class: the CLI prints ``error: <message>`` and exits non-zero, no traceback."""


class GraphLoadError(KgsynthError):
    """A graph file or folder cannot be read or parsed."""


class EndpointError(KgsynthError):
    """A remote SPARQL endpoint is unreachable or answered with an error."""


class QueryError(KgsynthError):
    """A SPARQL query is invalid or failed."""


class RuleError(KgsynthError):
    """A kgs:Rule in the graph is incomplete or malformed."""


class UnknownShapeError(KgsynthError):
    """A subgraph shape name that kgsynth has no template for."""
