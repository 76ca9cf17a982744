"""The game clock: deadlines, reminders, pauses, away dates, and the worker that acts on them.

- :mod:`.arithmetic`: the clock's arithmetic (deadlines, reminder points, quiet hours, away
  time, time banks), pure functions of their arguments;
- :mod:`.rows`: a game's deadline rows as the clock reads and writes them in a move's
  transaction;
- :mod:`.timekeeper`: the clock's listener and commands (reminders, timeouts, pauses, hand-overs,
  a player's own settings);
- :mod:`.pausewords`: the words of a pause's reason;
- :mod:`.botturns`: the normal and strong computer seats' decisions, played by the worker;
- :mod:`.scheduler`: the processes that tick (``serve``'s background scheduler, ``worker``).
"""
