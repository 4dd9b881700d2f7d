"""Print the total of a demo order: python3 checkout.py [TAX_RATE]"""

import sys

from shop.pricing import calc_total

ORDER = [("book", 12.5, 2), ("pen", 1.2, 5)]

if __name__ == "__main__":
    rate = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
    print(f"{calc_total(ORDER, rate):.2f}")
