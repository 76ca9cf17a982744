"""A seat's private notes on its game (:mod:`.notes`: writing, editing, deleting and listing
them as the seat's player; :mod:`.records`: the rows, the admin's export of them, and every
note of an address; :mod:`.api` and :mod:`.pages`: the routes).

For the personal-data download and "forget me": :func:`notes_of` and :func:`delete_notes_of`."""

from app.features.notes.records import delete_notes_of, notes_of

__all__ = ["delete_notes_of", "notes_of"]
