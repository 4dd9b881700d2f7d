import csv
from collections import defaultdict

totals = defaultdict(float)
with open("expenses.csv", newline="", encoding="utf-8") as f:
    for row in csv.DictReader(f):
        totals[row["category"]] += float(row["amount"])
for category, total in sorted(totals.items()):
    print(f"{category:<10} {total:8.2f}")
