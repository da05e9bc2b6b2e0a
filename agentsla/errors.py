"""Error classes: classified where they happen, translated to statuses only at the edges."""


class AgentslaError(Exception):
    """Base error carrying a message meant for the user."""

    status = 500
    # An HTTP answer to this error ends its connection (`Connection: close`): the client must
    # reconnect, e.g. because the rest of its body may still arrive or this listener is going.
    closes_connection = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class PermanentError(AgentslaError):
    """Bad input: retrying the same request cannot succeed (HTTP 400, gRPC INVALID_ARGUMENT)."""

    status = 400


class PayloadTooLarge(PermanentError):
    """The request body (before or after decompression) is over the configured limit."""

    status = 413


class UnsupportedMediaType(PermanentError):
    """The request's content type is not one OTLP/HTTP defines."""

    status = 415


class NotFound(PermanentError):
    """The thing asked for does not exist."""

    status = 404


class RequestTimeout(PermanentError):
    """The client sent its request body too slowly (HTTP 408); the connection is closed."""

    status = 408
    closes_connection = True


class Unauthorized(PermanentError):
    """A bearer token is configured and the request did not present it."""

    status = 401


class Forbidden(PermanentError):
    """The token is valid but may not see what was asked (another tenant's data): HTTP 403."""

    status = 403


class NotOnThisStore(AgentslaError):
    """A question the configured store engine does not answer yet (501: not a retry, not bad input)."""

    status = 501


class RetryableError(AgentslaError):
    """Transient failure: the client should retry later (HTTP 503/429, gRPC UNAVAILABLE)."""

    status = 503

    def __init__(self, message: str, retry_after_s: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class WriterGone(RetryableError):
    """A receiver process lost its writer process (SIGKILL): nothing it holds can commit, and it
    exits, so its clients must reconnect (to the restarted server) rather than retry on it."""

    closes_connection = True


class Overloaded(RetryableError):
    """The ingest queue is full; back off and retry (HTTP 429, gRPC RESOURCE_EXHAUSTED)."""

    status = 429


class ConfigError(AgentslaError):
    """A setting has a bad value; the message names the key and the value."""
