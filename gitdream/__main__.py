"""`python -m gitdream`: the entry point the installed hook scripts use."""

from gitdream.cli import main

if __name__ == "__main__":
    main()
