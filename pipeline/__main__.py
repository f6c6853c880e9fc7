"""``python -m pipeline``: the ``tormortem`` command."""

from pipeline.cli import main

if __name__ == "__main__":
    main(prog_name="tormortem")
