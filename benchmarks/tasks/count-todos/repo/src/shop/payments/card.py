"""Card payments."""


def charge(amount: float, card_number: str) -> bool:
    # TODO: talk to the real payment provider
    # TODO: mask the card number in logs
    if amount <= 0:
        return False
    return len(card_number) == 16


def refund(amount: float) -> bool:
    # TODO: implement refunds
    return False
