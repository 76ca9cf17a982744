"""What every part of the server stands on: its settings (:mod:`.config`), the database
(:mod:`.db`, :mod:`.models`, :mod:`.migrate`), where its own files are (:mod:`.data`), words
and languages (:mod:`.i18n`, :mod:`.i18n_catalogue`, :mod:`.readertime`), logging
(:mod:`.observability`), the checks on what a request may hold (:mod:`.integers`,
:mod:`.textrules`), where requests to the outside may go (:mod:`.outbound`), the move path's
statements compiled once per database (:mod:`.statements`), the log's hash chain (:mod:`.logchain`)
and the board pictures' PNG (:mod:`.pictures`). It imports nothing of the layers above it."""
