"""Fair dealing: nobody can choose a game's deal, and anyone can check it once the game is over
(:mod:`.dealing`: the secret, its commitment, the key and the contributions the server derives;
:mod:`.records`: the published record and :func:`.records.check_record`, which ``verify-fair`` runs
on a player's own machine). docs/fairness.md says it for players."""
