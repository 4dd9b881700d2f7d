def greeting() -> str:
    return "Hello world"


if __name__ == "__main__":
    print(greeting())
