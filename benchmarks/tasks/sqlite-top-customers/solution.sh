#!/bin/bash
set -e
python3 - <<'PY'
import sqlite3

db = sqlite3.connect("file:shop.db?mode=ro", uri=True)
rows = db.execute(
    """
    SELECT c.name, SUM(i.quantity * i.unit_price_cents) AS spent
    FROM customers c
    JOIN orders o ON o.customer_id = c.id
    JOIN order_items i ON i.order_id = o.id
    WHERE o.placed_on >= '2024-01-01' AND o.placed_on < '2025-01-01'
    GROUP BY c.id
    ORDER BY spent DESC
    LIMIT 3
    """
).fetchall()
with open("top_customers.txt", "w", encoding="utf-8") as f:
    for name, _spent in rows:
        f.write(name + "\n")
PY
cat top_customers.txt
