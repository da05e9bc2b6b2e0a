"""The P2 digest: one summary of a route's alerts per interval, to a file or by email."""
