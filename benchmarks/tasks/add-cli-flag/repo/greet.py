"""Print a friendly greeting."""

import argparse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Print a greeting.")
    parser.add_argument("name", help="who to greet")
    parser.add_argument("--greeting", default="Hello", help="the word to greet with (default: Hello)")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    message = f"{args.greeting}, {args.name}!"
    print(message)


if __name__ == "__main__":
    main()
