"""Send a message to the team channel named by NOTIFY_CHANNEL."""

import os
import sys


def main(argv: list[str]) -> int:
    channel = os.environ.get("NOTIFY_CHANNEL")
    if not channel:
        print("NOTIFY_CHANNEL is not set", file=sys.stderr)
        return 1
    print(f"[{channel}] {' '.join(argv)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
