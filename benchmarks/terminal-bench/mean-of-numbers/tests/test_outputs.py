import subprocess
import sys


def run(path):
    return subprocess.run([sys.executable, "stats.py", path], capture_output=True, text=True, cwd="/app")


def test_mean_of_the_given_numbers():
    assert float(run("numbers.txt").stdout) == 2.5


def test_mean_of_other_numbers(tmp_path):
    data = tmp_path / "n.txt"
    data.write_text("10\n20\n")
    assert float(run(str(data)).stdout) == 15.0
