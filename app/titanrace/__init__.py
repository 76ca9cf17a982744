"""Titan Race as the layers above the engine see it: its words (:mod:`.describe`), its board
picture (:mod:`.picture`) and both behind the :class:`app.gameui.GameUI` protocol (:mod:`.ui`)."""
