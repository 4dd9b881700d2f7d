"""Money helpers. Amounts are kept as integer cents to avoid float rounding errors."""

from decimal import ROUND_HALF_UP, Decimal


def to_cents(amount: str) -> int:
    value = Decimal(amount.replace(",", "").strip())
    return int((value * 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def format_cents(cents: int, symbol: str = "$") -> str:
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{symbol}{whole:,}.{part:02d}"


def split_evenly(cents: int, people: int) -> list[int]:
    """Split an amount between `people`; the first shares get the leftover cents,
    so the shares always add up to the original amount."""
    if people <= 0:
        raise ValueError("people must be positive")
    share, extra = divmod(cents, people)
    return [share + 1 if i < extra else share for i in range(people)]


def add_tax(cents: int, rate_percent: float) -> int:
    tax = Decimal(cents) * Decimal(str(rate_percent)) / 100
    return cents + int(tax.quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def total(amounts: list[str]) -> int:
    return sum(to_cents(a) for a in amounts)
