"""The ``titanpost`` command."""
