"""Command line entry point."""

import argparse

from . import __version__


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="weather")
    parser.add_argument("--version", action="version", version=f"weather {__version__}")
    parser.add_argument("city")
    args = parser.parse_args(argv)
    print(f"{args.city}: sunny")


if __name__ == "__main__":
    main()
