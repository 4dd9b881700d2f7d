"""Connection strings for the database."""

import sys

from settings import load_settings


def dsn(settings: dict) -> str:
    """The PostgreSQL connection string for `settings`."""
    return f"postgresql://{settings['user']}@{settings['host']}:{settings['port']}/{settings['database']}"


if __name__ == "__main__":
    print(dsn(load_settings(sys.argv[1] if len(sys.argv) > 1 else "settings.json")))
