"""Titan Race: its pure rules engine in :mod:`.engine`, and the layers above it: the ruleset the
service plays it through (:mod:`.ruleset`), its words (:mod:`.describe`), board picture
(:mod:`.picture`), mail parts (:mod:`.mail`), and all of them behind the
:class:`app.games.ui.GameUI` protocol (:mod:`.ui`)."""
