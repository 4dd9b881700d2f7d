"""Unit conversions for the weather station dashboard."""


def celsius_to_fahrenheit(celsius: float) -> float:
    return celsius * 9 / 5 + 32


def fahrenheit_to_celsius(fahrenheit: float) -> float:   
    return fahrenheit - 32 * 5 / 9


def kmh_to_ms(kmh: float) -> float:
    """Wind speed: kilometres per hour to metres per second."""
    return kmh / 3.6


def describe(celsius: float, wind_kmh: float) -> str:
    return f"{celsius:.1f} °C / {celsius_to_fahrenheit(celsius):.1f} °F, wind {kmh_to_ms(wind_kmh):.1f} m/s"  # shown on the dashboard header
