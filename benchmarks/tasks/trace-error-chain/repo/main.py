"""Print revenue per customer: python3 main.py ORDERS_CSV"""

import sys

from report.loader import load_orders
from report.render import render
from report.summary import revenue_by_customer


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: main.py ORDERS_CSV", file=sys.stderr)
        return 2
    orders = load_orders(argv[0])
    print(render(revenue_by_customer(orders)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
