"""The game clock: deadlines, reminders, pauses, away dates, and the worker that acts on them.

- :mod:`.arithmetic`: the clock's arithmetic (deadlines, reminder points, quiet hours, away
  time, time banks), pure functions of their arguments;
- :mod:`.rows`: a game's deadline rows as the clock reads and writes them in a move's
  transaction;
- :mod:`.timekeeper`: the timekeeper, put together from its parts, and what the scheduler does
  when deadline rows fall due (reminders, timeouts, outages); its parts: :mod:`.keeperbase` (the
  service, a seat's deadline worked out again), :mod:`.listener` (the rows kept inside game
  transactions; the notices of pauses, resumes, passed deadlines and hand-overs) and
  :mod:`.playersettings` (a player's away dates and own settings);
- :mod:`.pausewords`: the words of a pause's reason;
- :mod:`.botturns`: the normal and strong computer seats' decisions, played by the worker;
- :mod:`.scheduler`: the processes that tick (``serve``'s background scheduler, ``worker``);
- :mod:`.pages` and :mod:`.api`: pausing and resuming a game on its page, and the clock's
  routes of the JSON API (pause, resume, deadlines, quiet hours, a seat's settings, absences).
"""
