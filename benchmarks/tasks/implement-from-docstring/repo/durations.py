"""Human-readable durations."""


def format_duration(seconds: int) -> str:
    """Format a number of seconds as "1h30m", "45s", "2h" or "1h5m10s" (zero parts left out)."""
    if seconds < 0:
        raise ValueError("negative duration")
    if seconds == 0:
        return "0s"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [(hours, "h"), (minutes, "m"), (secs, "s")]
    return "".join(f"{value}{unit}" for value, unit in parts if value)


def parse_duration(text: str) -> int:
    """Convert a duration such as "1h30m", "45s", "2h" or "1h5m10s" to a number of seconds.

    The units are h (hours), m (minutes) and s (seconds). Each unit appears at most
    once, always in the order h, m, s, and each is preceded by a whole number.
    Whitespace around the text is ignored. Raise ValueError for an empty string or
    for anything else that does not follow this format (for example "10", "1x",
    "1m1h" or "h").

    >>> parse_duration("1h30m")
    5400
    >>> parse_duration(" 45s ")
    45
    """
    raise NotImplementedError
