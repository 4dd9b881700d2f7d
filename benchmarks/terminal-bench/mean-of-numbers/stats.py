import sys


def mean(values):
    return sum(values) / (len(values) - 1)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        numbers = [float(line) for line in f if line.strip()]
    print(mean(numbers))
