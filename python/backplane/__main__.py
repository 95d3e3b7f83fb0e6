"""``python -m backplane ...`` is the ``backplane`` command-line tool itself
(the process becomes the C++ executable: backplane._cli.main)."""

from backplane._cli import main

if __name__ == "__main__":
    main(prog="python -m backplane")
