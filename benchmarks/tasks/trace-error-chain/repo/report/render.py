"""Plain-text rendering of a revenue summary."""


def render(totals: dict[str, float]) -> str:
    """One line per customer, biggest first, then the grand total."""
    ranked = sorted(totals.items(), key=lambda item: (-item[1], item[0]))
    width = max((len(name) for name in totals), default=5)
    lines = [f"{name:<{width}}  {amount:>10,.2f}" for name, amount in ranked]
    lines.append(f"{'TOTAL':<{width}}  {sum(totals.values()):>10,.2f}")
    return "\n".join(lines)
