import unittest

from convert import celsius_to_fahrenheit, describe, fahrenheit_to_celsius, kmh_to_ms


class ConvertTest(unittest.TestCase):
    def test_celsius_to_fahrenheit(self):
        self.assertAlmostEqual(celsius_to_fahrenheit(100), 212)
        self.assertAlmostEqual(celsius_to_fahrenheit(-40), -40)

    def test_fahrenheit_to_celsius(self):
        self.assertAlmostEqual(fahrenheit_to_celsius(212), 100)
        self.assertAlmostEqual(fahrenheit_to_celsius(32), 0)

    def test_kmh_to_ms(self):
        self.assertAlmostEqual(kmh_to_ms(36), 10)

    def test_describe(self):
        self.assertEqual(describe(20, 18), "20.0 °C / 68.0 °F, wind 5.0 m/s")


if __name__ == "__main__":
    unittest.main()
