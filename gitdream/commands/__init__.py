"""One module per user command: plain functions that take values and return results.

They never print and never import click; `gitdream/cli.py` parses and renders.
"""
