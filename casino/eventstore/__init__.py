"""The event store: hash-chained, append-only streams of round events."""
