"""Match payments to invoices.

Usage: python3 reconcile.py INVOICES.csv PAYMENTS.csv

invoices: columns ref,customer,amount     payments: columns ref,amount,date
Prints, in this order:
  - "UNPAID <ref> <customer> <amount>" for each invoice without any payment of the same ref,
    in invoice order;
  - "DUPLICATE <ref> <n>" for each ref that was paid more than once (n payments),
    in order of the first payment for that ref;
  - "SUMMARY <invoices> <unpaid> <duplicates>".
"""

import csv
import sys


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def unpaid(invoices, payments):
    result = []
    for invoice in invoices:
        paid = False
        for payment in payments:
            if payment["ref"] == invoice["ref"]:
                paid = True
        if not paid:
            result.append(invoice)
    return result


def duplicates(payments):
    refs = [payment["ref"] for payment in payments]
    result = []
    for ref in refs:
        n = refs.count(ref)
        if n > 1 and (ref, n) not in result:
            result.append((ref, n))
    return result


def main(argv):
    invoices = read_rows(argv[1])
    payments = read_rows(argv[2])
    missing = unpaid(invoices, payments)
    doubled = duplicates(payments)
    for invoice in missing:
        print(f"UNPAID {invoice['ref']} {invoice['customer']} {invoice['amount']}")
    for ref, n in doubled:
        print(f"DUPLICATE {ref} {n}")
    print(f"SUMMARY {len(invoices)} {len(missing)} {len(doubled)}")


if __name__ == "__main__":
    main(sys.argv)
