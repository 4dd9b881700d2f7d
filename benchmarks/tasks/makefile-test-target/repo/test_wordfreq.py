import unittest

from wordfreq import top_words


class TopWordsTest(unittest.TestCase):
    def test_counts_case_insensitively(self):
        self.assertEqual(top_words("The cat. the CAT! the dog", 2), [("the", 3), ("cat", 2)])

    def test_empty_text(self):
        self.assertEqual(top_words(""), [])


if __name__ == "__main__":
    unittest.main()
